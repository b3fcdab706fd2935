package usg_test

import (
	"vetlens/engine/usg"
	"vetlens/engine/usg/usgort"
)

// Package usg's model-backed tests load the engine as the product does
// (engine_test.go, LoadORT).
func init() { usg.LoadORT = usgort.Load }
