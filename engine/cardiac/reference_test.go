package cardiac

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"vetlens/engine/manifest"
	"vetlens/engine/ort"
)

// referenceTolerance is the largest accepted |ONNX Runtime in Go - PyTorch
// at export| for any output value (toolchain notes measured 3e-7).
const referenceTolerance = 1e-4

// TestModelsMatchExportReference replays, for every shipped cardiac model,
// the input saved at export (models/reference/MODEL.json: model, input
// .f32 file, input_shape, outputs by name) through ONNX Runtime and compares
// with PyTorch's outputs. Every cardiac model in the manifest must have a
// reference.
func TestModelsMatchExportReference(t *testing.T) {
	testEngine(t) // skips without models; initialises ONNX Runtime
	dir := testModelsDir(t)
	m, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range slices.Concat(m.ByRole(RoleValidity), m.ByRole(RoleLandmark), m.ByRole(RoleRefine)) {
		t.Run(e.File, func(t *testing.T) {
			name := e.File[:len(e.File)-len(filepath.Ext(e.File))]
			b, err := os.ReadFile(filepath.Join(dir, "reference", name+".json"))
			if err != nil {
				t.Fatalf("no export reference: %v", err)
			}
			var ref struct {
				Model      string               `json:"model"`
				Input      string               `json:"input"`
				InputShape []int64              `json:"input_shape"`
				Outputs    map[string][]float64 `json:"outputs"`
			}
			if err := json.Unmarshal(b, &ref); err != nil {
				t.Fatal(err)
			}
			if ref.Model != e.File {
				t.Fatalf("reference is for %s", ref.Model)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "reference", ref.Input))
			if err != nil {
				t.Fatal(err)
			}
			n := int64(1)
			for _, d := range ref.InputShape {
				n *= d
			}
			if int64(len(raw)) != 4*n {
				t.Fatalf("input %s has %d bytes, shape %v needs %d", ref.Input, len(raw), ref.InputShape, 4*n)
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			s, err := ort.NewSession(m.Path(e), e.Inputs, e.Outputs, ort.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			outs, err := s.Run(t.Context(), ort.Tensor{Shape: ref.InputShape, Data: x})
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range e.Outputs {
				want, ok := ref.Outputs[o]
				if !ok {
					t.Fatalf("reference lacks output %s", o)
				}
				got := outs[i].Data
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, reference %d", o, len(got), len(want))
				}
				var maxd float64
				for j := range want {
					maxd = math.Max(maxd, math.Abs(float64(got[j])-want[j]))
				}
				t.Logf("%s: max |ORT - PyTorch| = %.2g", o, maxd)
				if !(maxd <= referenceTolerance) {
					t.Errorf("%s differs from the export reference by %.3g", o, maxd)
				}
			}
		})
	}
}
