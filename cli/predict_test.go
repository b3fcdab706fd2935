package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	xdraw "golang.org/x/image/draw"

	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiactest"
	"vetlens/engine/manifest"
	"vetlens/engine/ort"
	"vetlens/internal/config"
	"vetlens/internal/dicomtest"
)

// testModelsDir is the shipped models directory, or $VETLENS_TEST_MODELS
// (for example a test double from engine/cardiac/testdata). It skips only
// when the manifest has no cardiac models yet.
func testModelsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("VETLENS_TEST_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "models")
	}
	m, err := manifest.Load(dir)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(m.ByRole(cardiac.RoleLandmark))+len(m.ByRole(cardiac.RoleValidity)) == 0 {
		t.Skipf("no cardiac models in %s/manifest.json yet; set VETLENS_TEST_MODELS to a test double from engine/cardiac/testdata/make_test_double.py to run this", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Predict(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeImage(t *testing.T, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".png") {
		err = png.Encode(f, img)
	} else {
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 90})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func grayPicture(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := 50 + (x*x+y*3)%60
			if dx, dy := x-w/2, y-h*11/20; dx*dx*25+dy*dy*16 < w*w {
				v = 190
			}
			img.SetGray(x, y, color.Gray{uint8(v)})
		}
	}
	return img
}

func colourPicture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cs := [...]color.RGBA{{230, 20, 20, 255}, {20, 200, 40, 255}, {30, 40, 230, 255}, {250, 220, 0, 255}}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, cs[(x/40+y/40)%4])
		}
	}
	return img
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestPredictCLI runs a held-out phantom radiograph, a missing file, a
// corrupt file and a colour scene in one call and checks each line's
// shape and the rendered file.
func TestPredictCLI(t *testing.T) {
	models := testModelsDir(t)
	d := t.TempDir()
	good := filepath.Join("..", "engine", "cardiac", "testdata", "phantoms", "xraysim_3_1024x1024.jpg")
	corrupt := filepath.Join(d, "corrupt.png")
	os.WriteFile(corrupt, []byte("\x89PNG\r\n\x1a\nnot really"), 0o644)
	colour := filepath.Join(d, "scene.png")
	writeImage(t, colour, colourPicture(640, 480))
	missing := filepath.Join(d, "missing.jpg")
	out := filepath.Join(d, "render.jpg")

	code, stdout, stderr := run(t, "--models", models, "--render", out, good, missing, corrupt, colour)
	if code != 1 {
		t.Errorf("exit %d, want 1 (two files failed); stderr %s", code, stderr)
	}
	bodies := jsonLines(t, stdout, 4)

	// Line 1: a measured body (whatever the models conclude) with the
	// spec's fields and none of the storage or render fields.
	b := bodies[0]
	for _, k := range []string{"historic_vhs", "historic_vlas", "billing", "rendered_image", "error"} {
		if _, ok := b[k]; ok {
			t.Errorf("line 1 has %s", k)
		}
	}
	// A withheld VHS or VLAS is explained on stderr, and only then.
	explained := strings.Contains(stderr, good+": result ")
	if rc := b["result_code"]; (rc == 4.0 || rc == 5.0) != explained {
		t.Errorf("result %v, stderr %q", rc, stderr)
	}
	// The phantom is measured (whatever the result code), never rejected:
	// the body and the rendered file are always checked.
	want := []string{"model_confidence", "model_version", "pop_detected", "prediction", "result_code", "result_description", "spread", "vhs", "vlas"}
	if got := sortedKeys(b); !reflect.DeepEqual(got, want) {
		t.Errorf("line 1 keys %v, want %v (body %v)", got, want, b)
	}
	if p, _ := b["prediction"].([]any); len(p) != 7 {
		t.Errorf("prediction %v", b["prediction"])
	}
	f, err := os.Open(filepath.Join(d, "render-1.jpg"))
	if err != nil {
		t.Fatalf("rendered file: %v", err)
	}
	img, err := jpeg.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() != 1024 || img.Bounds().Dy() != 1024 {
		t.Fatalf("rendered file: %v, %v", err, img.Bounds())
	}
	// The annotation is drawn in colour over the grey radiograph.
	coloured := 0
	for y := 0; y < 1024; y += 4 {
		for x := 0; x < 1024; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if max(r, g, bl)-min(r, g, bl) > 0x3000 {
				coloured++
			}
		}
	}
	if coloured < 50 {
		t.Errorf("rendered file has %d coloured samples: no annotation drawn", coloured)
	}
	// Lines 2 and 3: error lines naming the file.
	for i, f := range []string{missing, corrupt} {
		e := bodies[1+i]
		keys := []string{"error", "file", "status"} // the API's 400 for a bad image
		if f == missing {
			keys = []string{"error", "file"} // no API equivalent
		}
		if got := sortedKeys(e); !reflect.DeepEqual(got, keys) || e["file"] != f || e["error"] == "" {
			t.Errorf("line %d: %v", 2+i, e)
		}
	}
	if !strings.Contains(bodies[2]["error"].(string), "not a usable JPEG, PNG or DICOM") || bodies[2]["status"] != 400.0 {
		t.Errorf("corrupt file: %v, want the API's 400 saying the image is not usable", bodies[2])
	}
	// Line 4: the rejection body exactly.
	want = []string{"classifier_confidence", "model_version", "rejected", "rejection_reason", "result_code", "result_description", "vhs", "vlas"}
	if got := sortedKeys(bodies[3]); !reflect.DeepEqual(got, want) {
		t.Errorf("rejection keys %v, want %v", got, want)
	}
	if bodies[3]["result_code"] != 6.0 || bodies[3]["vhs"] != nil || bodies[3]["rejection_reason"] != "not_a_valid_radiograph" {
		t.Errorf("rejection body %v", bodies[3])
	}
	if _, err := os.Stat(filepath.Join(d, "render-4.jpg")); err == nil {
		t.Error("a rejected image was rendered")
	}
}

// TestPredictCLIExplainsWithheld: a held-out phantom as it is, and the
// same phantom squashed to 2048x700 (its axes no longer perpendicular, so
// the plausibility guards should withhold the VHS): a line on stderr names
// the guard exactly when the result is 4 or 5.
func TestPredictCLIExplainsWithheld(t *testing.T) {
	models := testModelsDir(t)
	src := filepath.Join("..", "engine", "cardiac", "testdata", "phantoms", "xraysim_3_1024x1024.jpg")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	squashed := image.NewGray(image.Rect(0, 0, 2048, 700))
	xdraw.BiLinear.Scale(squashed, squashed.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	sq := filepath.Join(t.TempDir(), "squashed.jpg")
	writeImage(t, sq, squashed)

	code, stdout, stderr := run(t, "--models", models, src, sq)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), stdout)
	}
	for i, file := range []string{src, sq} {
		var b map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &b); err != nil {
			t.Fatal(err)
		}
		rc := b["result_code"]
		explained := strings.Contains(stderr, file+": result ")
		if (rc == 4.0 || rc == 5.0) != explained {
			t.Errorf("%s: result %v, stderr %q", file, rc, stderr)
		}
		t.Logf("%s: result %v vhs %v", filepath.Base(file), rc, b["vhs"])
	}
	t.Logf("stderr: %s", stderr)
}

// TestPredictCLISaysItLevelled: a held-out phantom turned 25 degrees is
// measured levelled, and stderr says so; the phantom as it is is not.
func TestPredictCLISaysItLevelled(t *testing.T) {
	models := testModelsDir(t)
	p := cardiactest.Find(t, "xraysim_1_640x480.png")
	src, tilted := p.Path, p.Tilted(t, 25)

	code, _, stderr := run(t, "--models", models, src, tilted)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	if !strings.Contains(stderr, tilted+": spine tilted; measured turned by -") {
		t.Errorf("no levelling note for the tilted phantom: %q", stderr)
	}
	if strings.Contains(stderr, src+": spine tilted") {
		t.Errorf("the upright phantom was levelled: %q", stderr)
	}
}

func TestPredictCLIUsage(t *testing.T) {
	if code, _, stderr := run(t); code != 2 || !strings.Contains(stderr, "usage: vetlens predict") {
		t.Errorf("no files: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := run(t, "--bogus", "x.jpg"); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, _, _ := run(t, "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}

// TestPredictCLINoCardiacModels: a models directory without cardiac models
// is a setup error with one clear line.
func TestPredictCLINoCardiacModels(t *testing.T) {
	if err := ort.Init("", config.ORTLibraryCandidates()...); err != nil {
		t.Fatalf("ONNX Runtime: %v", err)
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "manifest.json"), []byte(`{"families": {}, "models": []}`), 0o644)
	img := filepath.Join(d, "a.png")
	writeImage(t, img, grayPicture(64, 64))
	code, stdout, stderr := run(t, "--models", d, img)
	if code != ExitInternal || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "no cardiac models") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestPredictCLIBadLibrary runs in a child process because ONNX Runtime
// can be initialised only once per process.
func TestPredictCLIBadLibrary(t *testing.T) {
	if lib := os.Getenv("VETLENS_CLI_CHILD_LIB"); lib != "" {
		os.Exit(Predict(context.Background(), []string{"--ort-lib", lib, "x.jpg"}, os.Stdout, os.Stderr))
	}
	d := t.TempDir()
	notLib := filepath.Join(d, "libonnxruntime.so")
	os.WriteFile(notLib, []byte("not a shared library"), 0o644)
	for _, lib := range []string{filepath.Join(d, "missing.so"), notLib} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPredictCLIBadLibrary$")
		cmd.Env = append(os.Environ(), "VETLENS_CLI_CHILD_LIB="+lib)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitInternal {
			t.Errorf("%s: %v, want exit %d", lib, err, ExitInternal)
		}
		msg := strings.TrimSpace(errb.String())
		if out.Len() != 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, lib) {
			t.Errorf("%s: stdout %q, stderr %q: want one line naming the library", lib, out.String(), msg)
		}
	}
}

func TestRenderPath(t *testing.T) {
	for _, tc := range []struct {
		out  string
		i, n int
		want string
	}{{"", 0, 3, ""}, {"a.jpg", 0, 1, "a.jpg"}, {"a.jpg", 0, 2, "a-1.jpg"}, {"dir/b.x.jpg", 2, 3, "dir/b.x-3.jpg"}, {"noext", 1, 2, "noext-2"}} {
		if got := renderPath(tc.out, tc.i, tc.n); got != tc.want {
			t.Errorf("renderPath(%q,%d,%d) = %q, want %q", tc.out, tc.i, tc.n, got, tc.want)
		}
	}
}

// TestPredictCLIDICOM: `vetlens predict` reads DICOM by content (a file
// named .bin too) and measures it as its source JPEG; an unsupported
// transfer syntax is an error line naming it.
func TestPredictCLIDICOM(t *testing.T) {
	models := testModelsDir(t)
	set := dicomtest.Build(t)
	renamed := filepath.Join(t.TempDir(), "export.bin")
	if err := os.WriteFile(renamed, set.Get(t, "mono1-16bit").Bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	rle := set.Get(t, "rle")
	code, stdout, stderr := run(t, "--models", models, set.SourceJPEG, set.Get(t, "jpeg-baseline").Path, renamed, rle.Path)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the RLE file fails); stderr %s", code, stderr)
	}
	bodies := jsonLines(t, stdout, 4)
	if bodies[0]["vhs"] == nil {
		t.Fatalf("source JPEG not measured: %v", bodies[0])
	}
	for i := 1; i <= 2; i++ {
		if bodies[i]["vhs"] != bodies[0]["vhs"] || bodies[i]["vlas"] != bodies[0]["vlas"] {
			t.Errorf("line %d: VHS %v VLAS %v, source %v %v", i+1, bodies[i]["vhs"], bodies[i]["vlas"], bodies[0]["vhs"], bodies[0]["vlas"])
		}
	}
	if e, _ := bodies[3]["error"].(string); !strings.Contains(e, rle.ErrName) || !strings.Contains(e, rle.TransferSyntax) || bodies[3]["file"] != rle.Path {
		t.Errorf("RLE line %v, want an error naming %s (%s)", bodies[3], rle.ErrName, rle.TransferSyntax)
	}
}

// jsonLines parses stdout's n lines, each a JSON object.
func jsonLines(t *testing.T, stdout string, n int) []map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), n, stdout)
	}
	var bodies []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line is not JSON: %q", l)
		}
		bodies = append(bodies, m)
	}
	return bodies
}

// TestPredictCLISaysWhatTheScreenPhotoCheckSaw: a blurred screen photo
// fixture (engine/pop/testdata/variety) is corrected and measured, but a
// capture session would not keep it, so it is result 5 and the stderr
// line gives the guard and, after it, the frame's quality problem.
func TestPredictCLISaysWhatTheScreenPhotoCheckSaw(t *testing.T) {
	models := testModelsDir(t)
	if _, err := os.Stat(filepath.Join(models, "pop_corners_a.onnx")); err != nil {
		t.Skip("no PoP models in", models)
	}
	photo := filepath.Join("..", "engine", "pop", "testdata", "variety", "vscreen_0000.jpg")
	code, stdout, stderr := run(t, "--models", models, photo)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatal(err)
	}
	if b["result_code"] != 5.0 || b["vhs"] != nil || b["pop_detected"] != true {
		t.Fatalf("body %v", b)
	}
	want := photo + ": result 5: " + cardiac.GuardScreenPhotoQuality.Description() + " (screen_photo_quality): frame quality: [blurred]"
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q, want a line with %q", stderr, want)
	}
}
