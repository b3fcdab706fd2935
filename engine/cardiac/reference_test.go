package cardiac

import (
	"slices"
	"testing"

	"vetlens/engine/manifest"
	"vetlens/engine/modelref"
	"vetlens/engine/ort"
)

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
			diff, err := modelref.Replay(t.Context(), ort.Opener(ort.Options{}), m, e)
			if err != nil {
				t.Fatal(err)
			}
			for o, d := range diff {
				t.Logf("%s: max |ORT - PyTorch| = %.2g", o, d)
				if !(d <= modelref.Tolerance) {
					t.Errorf("%s differs from the export reference by %.3g", o, d)
				}
			}
		})
	}
}
