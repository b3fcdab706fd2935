//go:build unix

package diskfree

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Usage reads the filesystem's free and total bytes.
func (d Dir) Usage() (Usage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.Path, &st); err != nil {
		return Usage{}, fmt.Errorf("diskfree: statfs %s: %w", d.Path, err)
	}
	bs := uint64(st.Bsize) //nolint:unconvert // Bsize is int64 on Linux, uint32 on BSDs
	return Usage{Free: st.Bavail * bs, Total: st.Blocks * bs}, nil
}
