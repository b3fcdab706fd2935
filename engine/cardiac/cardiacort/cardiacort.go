// Package cardiacort loads the cardiac engine on ONNX Runtime: the one
// package through which the product's cardiac engine links the runtime
// (engine/ort). Package cardiac holds the value types, geometry, guards
// and decisions and runs its models through infer.Session, so what only
// reads results (ui, platform/httpapi) does not link ONNX Runtime by
// importing them; what measures images (the command line, app/learn,
// bench) loads the engine here.
package cardiacort

import (
	"vetlens/engine/cardiac"
	"vetlens/engine/ort"
)

// Load reads dir/manifest.json and opens the cardiac models in ONNX
// Runtime sessions with o.IntraOpThreads (cardiac.LoadWith checks the
// manifest and opens two models at a time). ort.Init must have
// succeeded. It returns an error wrapping cardiac.ErrNoModels when the
// manifest lists no cardiac models.
func Load(dir string, o cardiac.Options) (*cardiac.Engine, error) {
	return cardiac.LoadWith(dir, ort.Opener(ort.Options{IntraOpThreads: o.IntraOpThreads}), o)
}
