//go:build !windows

package printing

// System is this system's printing: CUPS's lp.
type System = LP
