// Package usgort loads the USG engine on ONNX Runtime: the one package
// through which the product's USG engine links the runtime (engine/ort).
// Package usg holds the request values, ensemble arithmetic, SHAP,
// conformal sets and response bodies and runs its model through
// infer.Session.
package usgort

import (
	"vetlens/engine/ort"
	"vetlens/engine/usg"
)

// Load reads the usg family and model from dir/manifest.json and opens
// the model in an ONNX Runtime session with one intra-op thread
// (usg.LoadWith). ort.Init must have succeeded.
func Load(dir string) (*usg.Engine, error) {
	return usg.LoadWith(dir, ort.Opener(ort.Options{IntraOpThreads: 1}))
}
