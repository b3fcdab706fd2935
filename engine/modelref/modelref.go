// Package modelref replays the export reference of a shipped model: the
// input the trainer saved at export (models/reference/NAME.json: model,
// input .f32 file, input_shape, outputs by name) through the runtime the
// caller opens the model with (infer.Opener; ONNX Runtime in the product,
// ort.Opener), for the tests that check Go and PyTorch agree on every
// model and for app/learn's check of a trained candidate. It links no
// model runtime itself.
package modelref

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// Tolerance is the largest accepted |ONNX Runtime in Go - PyTorch at
// export| for any output value (toolchain notes measured 3e-7).
const Tolerance = 1e-4

// Replay runs model e's export reference through a session that open
// loads (for ONNX Runtime, ort.Opener with default options; the runtime
// must be initialised) and returns, per output name, the largest absolute
// difference from PyTorch's values.
func Replay(ctx context.Context, open infer.Opener, m *manifest.Manifest, e manifest.Model) (map[string]float64, error) {
	name := e.File[:len(e.File)-len(filepath.Ext(e.File))]
	b, err := os.ReadFile(filepath.Join(m.Dir, "reference", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("no export reference for %s: %w", e.File, err)
	}
	var ref struct {
		Model      string               `json:"model"`
		Input      string               `json:"input"`
		InputShape []int64              `json:"input_shape"`
		Outputs    map[string][]float64 `json:"outputs"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		return nil, fmt.Errorf("export reference for %s: %w", e.File, err)
	}
	if ref.Model != e.File {
		return nil, fmt.Errorf("export reference %s.json is for %s", name, ref.Model)
	}
	raw, err := os.ReadFile(filepath.Join(m.Dir, "reference", ref.Input))
	if err != nil {
		return nil, fmt.Errorf("export reference input for %s: %w", e.File, err)
	}
	n := int64(1)
	for _, d := range ref.InputShape {
		n *= d
	}
	if int64(len(raw)) != 4*n {
		return nil, fmt.Errorf("input %s has %d bytes, shape %v needs %d", ref.Input, len(raw), ref.InputShape, 4*n)
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	s, err := open(m.Path(e), e.Inputs, e.Outputs)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	outs, err := s.Run(ctx, infer.Tensor{Shape: ref.InputShape, Data: x})
	if err != nil {
		return nil, err
	}
	diff := map[string]float64{}
	for i, o := range e.Outputs {
		want, ok := ref.Outputs[o]
		if !ok {
			return nil, fmt.Errorf("export reference for %s lacks output %s", e.File, o)
		}
		got := outs[i].Data
		if len(got) != len(want) {
			return nil, fmt.Errorf("%s: output %s has %d values, reference %d", e.File, o, len(got), len(want))
		}
		var maxd float64
		for j := range want {
			maxd = math.Max(maxd, math.Abs(float64(got[j])-want[j]))
		}
		diff[o] = maxd
	}
	return diff, nil
}
