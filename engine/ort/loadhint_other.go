//go:build !windows

package ort

// loadHint: nothing to add off Windows (loadhint_windows.go).
const loadHint = ""
