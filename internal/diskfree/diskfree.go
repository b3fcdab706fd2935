// Package diskfree reads the free space of the filesystem holding a
// directory (statfs).
package diskfree

// Usage is a filesystem's size and the space an unprivileged process may
// still write.
type Usage struct {
	// Free is the bytes available to an unprivileged user (f_bavail).
	Free uint64
	// Total is the filesystem's size in bytes.
	Total uint64
}

// Dir is a probe of the filesystem holding the directory Path.
type Dir struct {
	Path string
}
