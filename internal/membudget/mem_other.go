//go:build !linux

package membudget

// TotalMemory is the machine's physical memory in bytes; 0 (unknown)
// outside Linux.
func TotalMemory() int64 { return 0 }
