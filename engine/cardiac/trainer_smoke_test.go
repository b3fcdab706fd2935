package cardiac

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pythonForTraining is Debian's interpreter, which has python3-torch.
const pythonForTraining = "/usr/bin/python3"

// TestTrainerSmokeExportLoadsInGo trains two landmark models and two
// refinement models for a few steps on tiny generated phantoms and crops,
// exports them, composes a manifest beside the shipped validity model, and
// runs a prediction through this engine: the whole trainer -> ONNX -> Go
// path, end to end, both stages.
func TestTrainerSmokeExportLoadsInGo(t *testing.T) {
	if testing.Short() {
		t.Skip("trainer smoke test needs python3-torch and about a minute")
	}
	shipped := testModelsDir(t)
	testEngine(t) // initialises ONNX Runtime
	train := filepath.Join("..", "..", "models", "train")
	dir := t.TempDir()
	// run runs a trainer module (python3 -m MODULE ARGS) from the package
	// root, models/train.
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(pythonForTraining, append([]string{"-m"}, args...)...)
		cmd.Dir = train
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	npz := filepath.Join(dir, "tiny.npz")
	run("cardiac.dataset", "--n", "12", "--seed", "555", "--size", "64", "--workers", "1", npz)
	crops := filepath.Join(dir, "crops.npz")
	run("cardiac.refine", "--n", "4", "--seed", "556", "--size", "64", "--workers", "1", crops)
	trainTwo := func(data, prefix string) []string {
		var ckpts []string
		for _, seed := range []string{"1", "2"} {
			ck := filepath.Join(dir, prefix+seed+".pt")
			run("cardiac.train_landmarks", "--data", data, "--size", "64", "--width", "4", "--seed", seed,
				"--steps", "3", "--batch", "4", "--threads", "1", "--out", ck)
			ckpts = append(ckpts, ck)
		}
		return ckpts
	}
	for _, f := range []string{"cardiac_validity.onnx", "cardiac_validity.meta.json", "cardiac.family.json"} {
		copyFile(t, filepath.Join(shipped, f), filepath.Join(dir, f))
	}
	run(append([]string{"cardiac.export_landmarks", "--models", dir}, trainTwo(npz, "m")...)...)
	run(append([]string{"cardiac.export_landmarks", "--models", dir, "--role", "refine"}, trainTwo(crops, "r")...)...)
	run("make_manifest", dir)

	e, err := loadORT(dir, DefaultOptions())
	if err != nil {
		t.Fatalf("load freshly exported models: %v", err)
	}
	defer e.Close()
	if e.LandmarkModels() != 2 || e.RefineModels() != 2 {
		t.Fatalf("loaded %d landmark and %d refinement models, want 2 and 2", e.LandmarkModels(), e.RefineModels())
	}
	img, err := os.ReadFile(filepath.Join(shipped, "reference", "smoke_phantom.png"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.PredictBytes(context.Background(), img, PredictOptions{})
	if err != nil {
		t.Fatalf("predict with freshly exported models: %v", err)
	}
	// The shipped validity model accepts the phantom, so both fresh
	// landmark models ran: two landmark sets of 7 finite points, each
	// model's own (different seeds give different weights), averaged into
	// the ensemble within the image; and inference is deterministic.
	if res.Width == 0 || res.Code == CodeRejected || res.Code == CodeUnexpected {
		t.Fatalf("result code %d on %dx%d: the fresh models did not measure the phantom", res.Code, res.Width, res.Height)
	}
	if len(res.ModelLandmarks) != 2 {
		t.Fatalf("%d landmark sets, want one per exported model (2)", len(res.ModelLandmarks))
	}
	if res.ModelLandmarks[0] == res.ModelLandmarks[1] {
		t.Error("the two exported models gave identical landmarks: one file loaded twice?")
	}
	for m, l := range res.ModelLandmarks {
		for k, p := range l {
			if !isFinite(p.X) || !isFinite(p.Y) {
				t.Errorf("model %d landmark %s not finite: %v", m, ClassNames[k], p)
			}
		}
	}
	for k, p := range res.Landmarks {
		if p.X < 0 || p.Y < 0 || p.X > float64(res.Width) || p.Y > float64(res.Height) {
			t.Errorf("ensemble landmark %s %v outside %dx%d", ClassNames[k], p, res.Width, res.Height)
		}
	}
	again, err := e.PredictBytes(context.Background(), img, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Landmarks != res.Landmarks || again.Code != res.Code {
		t.Errorf("second run differs: %v code %d, first %v code %d", again.Landmarks, again.Code, res.Landmarks, res.Code)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
