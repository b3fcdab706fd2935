package cli

import (
	"vetlens/app/capture"
	"vetlens/engine/pop/poport"
)

// loadPoP loads the learned PoP model family from dir on ONNX Runtime
// (poport.Load; the runtime initialised). Without it the classical
// screen finder runs: warn gets the reason, and the returned analyzer has
// no models. The caller closes the models (capture.PoP.Models; nil is
// fine). loadEngines calls it.
func loadPoP(dir string, warn func(err error)) capture.PoP {
	m, err := poport.Load(dir)
	if err != nil {
		warn(err)
		return capture.PoP{}
	}
	return capture.PoP{Models: m}
}
