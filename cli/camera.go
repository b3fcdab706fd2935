package cli

import (
	"vetlens/app/live"
	"vetlens/platform/camera"
	"vetlens/ui"
)

// maxCameraProbe is how many device indices the Capture tab probes.
const maxCameraProbe = 8

// addCamera gives the window its capture sources (platform/camera): the
// camera devices OpenCV can open, and any spec opened looping (a video
// file or image folder plays on until the session ends).
func addCamera(o *ui.Options) {
	o.Cameras = func() []string {
		var out []string
		for _, d := range camera.ListDevices(maxCameraProbe) {
			out = append(out, d.Spec)
		}
		return out
	}
	o.OpenCamera = func(spec string) (live.Source, error) {
		return camera.Open(spec, camera.Loop())
	}
}
