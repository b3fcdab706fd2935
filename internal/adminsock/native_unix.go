//go:build !windows

package adminsock

import "os"

// native: a unix-domain socket.
const native = KindUnix

// createPrivate creates a new file only its owner can read or write.
func createPrivate(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
