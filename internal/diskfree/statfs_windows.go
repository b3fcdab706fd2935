//go:build windows

package diskfree

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// Usage reads the volume's free and total bytes (GetDiskFreeSpaceEx). Free
// is what the calling user may still write, quotas included, as f_bavail
// is on Unix.
func (d Dir) Usage() (Usage, error) {
	p, err := windows.UTF16PtrFromString(d.Path)
	if err != nil {
		return Usage{}, fmt.Errorf("diskfree: %s: %w", d.Path, err)
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return Usage{}, fmt.Errorf("diskfree: GetDiskFreeSpaceEx %s: %w", d.Path, err)
	}
	return Usage{Free: free, Total: total}, nil
}
