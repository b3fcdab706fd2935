//go:build !(linux && cgo)

package ort

// mallocArenasCapped is false where the C library is not glibc's: the
// arena limit is glibc's alone.
func mallocArenasCapped() bool { return false }
