//go:build linux

package camera

import "gocv.io/x/gocv"

// Camera devices on Linux: OpenCV's own choice of backend (V4L2 or
// GStreamer, as the build has them) for index N, whose device node is
// /dev/videoN.
const (
	deviceAPI  = gocv.VideoCaptureAny
	deviceNode = "/dev/video"
)
