//go:build !unix && !windows

package diskfree

import "errors"

// Usage is not implemented on this platform: the free-space guard treats
// the error as "unknown" and lets every write through.
func (d Dir) Usage() (Usage, error) {
	return Usage{}, errors.New("diskfree: free space is not read on this platform")
}
