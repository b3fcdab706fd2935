// Package infer holds what passes between an engine and the runtime that
// runs its models: tensors, a loaded model (Session) and the function that
// loads one (Opener). It imports nothing of the module, so an engine's
// value types, geometry and decisions can be used without linking a
// runtime: engine/ort provides the ONNX Runtime sessions, and a loader
// beside each engine (engine/cardiac/cardiacort) hands them to it.
package infer

import "context"

// Tensor is a float32 tensor in row-major order.
type Tensor struct {
	Shape []int64
	Data  []float32
}

// Session is one loaded model with named float32 inputs and outputs. Run
// is safe for concurrent use.
type Session interface {
	// Name is the model file's base name.
	Name() string
	// Run feeds one tensor per input name and returns one tensor per
	// output name, in the order the session was opened with.
	Run(ctx context.Context, in ...Tensor) ([]Tensor, error)
	// Close releases the session.
	Close() error
}

// Opener loads the model file at path with the given input and output
// names, in that order.
type Opener func(path string, inputs, outputs []string) (Session, error)
