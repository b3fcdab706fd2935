#!/bin/bash
# pgcluster.sh: a throwaway PostgreSQL cluster for the store tests.
#
#   pgcluster.sh start DIR   initdb into DIR/data, start it listening only on
#                            a Unix socket in DIR (no TCP), print the DSN
#   pgcluster.sh stop DIR    stop it (fast shutdown) and remove DIR
#
# PostgreSQL refuses to run as root, so as root the cluster runs as the
# postgres user (made by Debian's postgresql package) and DIR is handed
# to it. Authentication is trust on the socket, which only the cluster's
# owner and root can reach (DIR is mode 0700).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|stop DIR" >&2
	exit 2
fi

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bindir" ] && command -v pg_ctl >/dev/null; then
	bindir=$(dirname "$(command -v pg_ctl)")
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
	echo "pgcluster: no PostgreSQL server binaries (apt-get install postgresql)" >&2
	exit 1
fi

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	mkdir -p "$dir"
	chmod 0700 "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
		runuser -u postgres -- test -w "$dir" ||
			{ echo "pgcluster: the postgres user cannot reach $dir (a parent directory is closed to it)" >&2; exit 1; }
	fi
	as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	# No TCP listener; the socket lives in DIR. fsync stays on: the
	# kill -9 test relies on committed means durable.
	as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=200 -c shared_buffers=32MB" start >/dev/null ||
		{ cat "$dir/server.log" >&2; exit 1; }
	echo "postgres://postgres@/postgres?host=$dir&sslmode=disable"
	;;
stop)
	if [ -d "$dir/data" ]; then
		as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
	;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 2
	;;
esac
