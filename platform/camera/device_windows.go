//go:build windows

package camera

import "gocv.io/x/gocv"

// Camera devices on Windows: DirectShow, index N in its enumeration
// order. OpenCV built with mingw-w64 (issue 45's cross-build) has no
// Media Foundation backend (its CMake option WITH_MSMF defaults to NOT
// MINGW) but DirectShow (WITH_DSHOW, on), which USB cameras and UVC
// capture dongles register with. One backend only, so that ListDevices
// and "device:N" agree on N. Windows has no device node to check first.
const (
	deviceAPI  = gocv.VideoCaptureDshow
	deviceNode = ""
)
