package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/api/cardiacv3"
)

const popFixtures = "../engine/pop/testdata"

func TestCornersCommand(t *testing.T) {
	cases := []struct {
		name   string
		file   string
		status int
		want   string
	}{
		{"screen photo", "screen_0001.jpg", ExitOK, `"order":"TL,TR,BR,BL"`},
		{"all black frame", "BLACK", ExitRejected, `"status":422`},
		{"missing file", "nope.jpg", ExitRejected, `"error"`},
	}
	black := filepath.Join(t.TempDir(), "black.png")
	var pngb bytes.Buffer
	png.Encode(&pngb, image.NewGray(image.Rect(0, 0, 320, 240)))
	if err := os.WriteFile(black, pngb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(popFixtures, tc.file)
			if tc.file == "BLACK" {
				path = black
			}
			var out, errb bytes.Buffer
			if got := Corners(context.Background(), []string{path}, &out, &errb); got != tc.status {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", got, tc.status, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Fatalf("stdout %s lacks %s", out.String(), tc.want)
			}
			if tc.status == ExitOK {
				var body cardiacv3.Corners
				if err := json.Unmarshal(out.Bytes(), &body); err != nil || body.ImageWidth != 960 || body.ImageHeight != 540 {
					t.Fatalf("body %+v, %v", body, err)
				}
			}
		})
	}
	var out, errb bytes.Buffer
	if got := Corners(context.Background(), nil, &out, &errb); got != ExitUsage {
		t.Fatalf("no file: exit %d", got)
	}
}

func TestPreprocessCommand(t *testing.T) {
	dir := t.TempDir()
	jpg := filepath.Join(dir, "out.jpg")
	var out, errb bytes.Buffer
	// Flags after the file, as in the usage line.
	if got := Preprocess(context.Background(), []string{filepath.Join(popFixtures, "screen_0001.jpg"), "-o", jpg}, &out, &errb); got != ExitOK {
		t.Fatalf("exit %d: %s %s", got, out.String(), errb.String())
	}
	var body cardiacv3.Rectified
	if err := json.Unmarshal(out.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.RectifiedImage != "" || body.Width < 64 || body.Height < 64 || body.Order != "TL,TR,BR,BL" {
		t.Fatalf("body with -o: %+v", body)
	}
	b, err := os.ReadFile(jpg)
	if err != nil || !bytes.HasPrefix(b, []byte{0xff, 0xd8}) {
		t.Fatalf("written JPEG: %v", err)
	}
	out.Reset()
	if got := Preprocess(context.Background(), []string{filepath.Join(popFixtures, "screen_0001.jpg")}, &out, &errb); got != ExitOK {
		t.Fatalf("exit %d", got)
	}
	body = cardiacv3.Rectified{}
	if err := json.Unmarshal(out.Bytes(), &body); err != nil || body.RectifiedImage == "" {
		t.Fatalf("body without -o lacks the image: %v", err)
	}
}

// TestPredictCorrectsScreenPhotos: `vetlens predict` sets pop_detected on a
// screen photo and not on a radiograph file (real models or a test double).
func TestPredictCorrectsScreenPhotos(t *testing.T) {
	dir := testModelsDir(t)
	code, out, errOut := run(t, "--models", dir, filepath.Join(popFixtures, "screen_0001.jpg"), filepath.Join(popFixtures, "radiograph_0001.jpg"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out)
	}
	for i, want := range []bool{true, false} {
		var body struct {
			Pop    *bool `json:"pop_detected"`
			Result int   `json:"result_code"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &body); err != nil {
			t.Fatal(err)
		}
		if body.Result == 6 {
			continue // rejected: the body carries no pop_detected
		}
		if body.Pop == nil || *body.Pop != want {
			t.Errorf("line %d: pop_detected %v, want %v", i, body.Pop, want)
		}
	}
}
