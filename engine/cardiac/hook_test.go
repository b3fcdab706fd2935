package cardiac_test

import (
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
)

// The model-backed tests of package cardiac load the engine as the
// product does (engine_test.go, LoadORT).
func init() { cardiac.LoadORT = cardiacort.Load }
