//go:build !linux && !windows

package camera

import "gocv.io/x/gocv"

// Camera devices elsewhere: OpenCV's own choice of backend, no device
// node to check first.
const (
	deviceAPI  = gocv.VideoCaptureAny
	deviceNode = ""
)
