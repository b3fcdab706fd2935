#!/bin/bash
# Copy into DIR the DLLs FILE... need that are not part of Windows: the
# closure of their imports (x86_64-w64-mingw32-objdump -p, "DLL Name"),
# looked up case-insensitively in SEARCH (a colon-separated list of
# folders: OpenCV's bin, the mingw-w64 runtime's). Names found in none are
# Windows's own (KERNEL32.dll, USER32.dll, api-ms-win-*, ...) and are listed,
# but for the Visual C++ runtime's (MSVCP140*, VCRUNTIME140*: onnxruntime.dll
# imports them), which Windows has only with the Visual C++ Redistributable.
#   packaging/windows/dlls.sh DIR SEARCH FILE...
set -euo pipefail
dir=$1 search=$2; shift 2
declare -A seen
queue=("$@")
system=() vcrt=()
while [ ${#queue[@]} -gt 0 ]; do
	f=${queue[0]}; queue=("${queue[@]:1}")
	for name in $(x86_64-w64-mingw32-objdump -p "$f" | sed -n 's/^\s*DLL Name: //p'); do
		key=${name,,}
		[ -n "${seen[$key]:-}" ] && continue
		seen[$key]=1
		found=""
		IFS=: read -ra dirs <<<"$search"
		for d in "${dirs[@]}"; do
			found=$(find "$d" -maxdepth 1 -iname "$name" -print -quit 2>/dev/null)
			[ -n "$found" ] && break
		done
		if [ -n "$found" ]; then
			# Debian's mingw runtime DLLs keep their symbols (libstdc++-6.dll
			# 23.7 MB): stripped copies, as the exe is (-s -w).
			[ -e "$dir/$(basename "$found")" ] || { install -m 0644 "$found" "$dir/" &&
				x86_64-w64-mingw32-strip --strip-unneeded "$dir/$(basename "$found")"; }
			echo "  $(basename "$found")  <- $found"
			queue+=("$found")
		elif [[ $key == msvcp140* || $key == vcruntime140* ]]; then
			vcrt+=("$name")
		else
			system+=("$name")
		fi
	done
done
echo "  from Windows: ${system[*]}"
[ ${#vcrt[@]} = 0 ] || echo "  from the Visual C++ 2015-2022 Redistributable (not shipped): ${vcrt[*]}"
