//go:build !linux || !cgo

package membudget

// trimCHeap does nothing where malloc_trim is not available.
func trimCHeap() {}
