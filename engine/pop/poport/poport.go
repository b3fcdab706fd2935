// Package poport loads the learned PoP models (the screen finder of
// engine/pop) on ONNX Runtime: the one package through which the
// product's PoP pipeline links the runtime (engine/ort). Package pop
// holds the geometry, the classical detector and the learned finder's
// decisions and runs its models through infer.Session, so what only
// uses its types or the classical pipeline (ui, app, platform/httpapi)
// does not link ONNX Runtime; the command line (and bench, and tests)
// loads the models here and hands them in.
package poport

import (
	"vetlens/engine/ort"
	"vetlens/engine/pop"
)

// Load loads the five PoP models listed in dir/manifest.json
// (pop.LoadModelsWith: manifest, roles and checksums) into ONNX Runtime
// sessions with one intra-op thread each. ort.Init must have succeeded.
func Load(dir string) (*pop.Models, error) {
	return pop.LoadModelsWith(dir, ort.Opener(ort.Options{IntraOpThreads: 1}))
}
