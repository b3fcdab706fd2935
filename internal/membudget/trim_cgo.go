//go:build linux && cgo

package membudget

/*
#include <malloc.h>
*/
import "C"

// trimCHeap returns free C heap memory (glibc malloc_trim) to the OS.
func trimCHeap() { C.malloc_trim(0) }
