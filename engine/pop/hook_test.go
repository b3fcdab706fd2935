package pop_test

import (
	"vetlens/engine/pop"
	"vetlens/engine/pop/poport"
)

// Package pop's model-backed tests load the models as the product does
// (models_test.go, LoadORT).
func init() { pop.LoadORT = poport.Load }
