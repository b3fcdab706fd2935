package httpapi

import (
	"os"
	"strings"
	"testing"
	"time"

	"vetlens/app/capture"
	"vetlens/engine/testmodels"
	"vetlens/internal/dicomtest"
)

// TestV3PredictDICOM sends base64 DICOM files in `image` (the documented
// extension of the spec, docs/api.md) to /v3/predict on the shipped
// models, with and without the PoP pipeline: each file that holds the
// source's grey levels gives the VHS of the source JPEG; an unsupported
// transfer syntax is a 400 naming it.
func TestV3PredictDICOM(t *testing.T) {
	set := dicomtest.Build(t)
	eng := testmodels.Cardiac(t)
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	for _, pipeline := range []struct {
		name string
		opts apiOpts
	}{
		{"decoded", apiOpts{cardiac: eng}},
		{"PoP pipeline", apiOpts{cardiac: eng, pipeline: capture.NewService(mgr, eng, capture.PoP{})}},
	} {
		t.Run(pipeline.name, func(t *testing.T) {
			a := newAPI(t, pipeline.opts)
			predict := func(b []byte) (int, map[string]any) {
				resp, body := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(b)})
				return resp.StatusCode, obj(t, body)
			}
			status, ref := predict(fileBytes(t, set.SourceJPEG))
			if status != 200 || ref["vhs"] == nil {
				t.Fatalf("source phantom: %d %v", status, ref)
			}
			for _, name := range []string{"jpeg-baseline", "mono1-16bit", "multiframe-8bit", "deflated-8bit", "rle"} {
				f := set.Get(t, name)
				b, err := os.ReadFile(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				status, m := predict(b)
				if f.Want == nil {
					msg, _ := m["error"].(string)
					if status != 400 || !strings.Contains(msg, f.ErrName) || !strings.Contains(msg, f.TransferSyntax) {
						t.Errorf("%s: %d %v, want 400 naming %s (%s)", name, status, m, f.ErrName, f.TransferSyntax)
					}
					continue
				}
				if status != 200 || m["vhs"] == nil {
					t.Fatalf("%s: %d %v", name, status, m)
				}
				dv := m["vhs"].(float64) - ref["vhs"].(float64)
				t.Logf("%s: VHS %.2f (source %.2f), VLAS %v (source %v)", name, m["vhs"], ref["vhs"], m["vlas"], ref["vlas"])
				// The same pixels give the same VHS; dcmtk's own JPEG
				// decoding (deflated-8bit) differs by a grey level here
				// and there.
				tol := 0.01
				if !f.Exact {
					tol = 0.05
				}
				if dv > tol || dv < -tol {
					t.Errorf("%s: VHS %.3f, source %.3f (tolerance %.2f)", name, m["vhs"], ref["vhs"], tol)
				}
			}
		})
	}
}
