package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/app"
)

// testVideo is platform/camera's SYNTHETIC test video (a screen photo
// sequence; a session completes on it).
var testVideo = filepath.Join("..", "platform", "camera", "testdata", "screen_sequence.avi")

// roomPicture is a frame without a screen in it.
func roomPicture(t *testing.T, path string, shade uint8) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for y := 0; y < 240; y++ {
		for x := 0; x < 320; x++ {
			img.Set(x, y, color.RGBA{shade + uint8(x/8), 80 + uint8(y/6), 120, 255})
		}
	}
	writeImage(t, path, img)
}

// captureLines parses stdout's JSON lines.
func captureLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestCaptureCommand(t *testing.T) {
	models := testModelsDir(t)
	dir := t.TempDir()
	room := filepath.Join(dir, "room.jpg")
	roomPicture(t, room, 60)
	rooms := filepath.Join(dir, "rooms")
	if err := os.Mkdir(rooms, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a.jpg", "b.jpg", "c.jpg"} {
		roomPicture(t, filepath.Join(rooms, name), uint8(40+20*i))
	}
	rect, rendered := filepath.Join(dir, "rect.jpg"), filepath.Join(dir, "rendered.jpg")

	cases := []struct {
		name   string
		args   []string
		status int
		// last is a substring of the last stdout line; bodies the
		// session_status of every line after the start body ("" skips).
		last  string
		final string
	}{
		// The video plays at its own rate while the session takes the
		// newest frame whenever it is free: on a loaded machine it may end
		// before the session kept three good frames, as a real recording
		// would, so the completing cases replay it (--loop) until the
		// session's own outcome.
		{name: "test video completes", args: []string{"--camera", testVideo, "--loop"}, status: ExitOK,
			last: `"rectified_image":"`, final: app.StatusComplete},
		{name: "images to files", args: []string{"--camera", "file:" + testVideo, "--loop", "-o", rect, "--render", rendered}, status: ExitOK,
			final: app.StatusComplete},
		{name: "no screen in a looping image: the session fails", args: []string{"--camera", room, "--loop"}, status: ExitRejected,
			last: `"error":"max_frames_exceeded"`, final: app.StatusFailed},
		{name: "folder ends first", args: []string{"--camera", rooms}, status: ExitRejected,
			last: `the source ended before the session finished`},
		{name: "max seconds", args: []string{"--camera", room, "--loop", "--max-seconds", "0.5"}, status: ExitRejected,
			last: `stopped after 0.5 s`},
		{name: "missing file", args: []string{"--camera", filepath.Join(dir, "nope.avi")}, status: ExitRejected,
			last: `"camera":"` + filepath.Join(dir, "nope.avi")},
		{name: "absent device", args: []string{"--camera", "device:97"}, status: ExitRejected, last: `camera device unavailable`},
		{name: "stray argument", args: []string{"x.avi"}, status: ExitUsage},
		{name: "negative max seconds", args: []string{"--max-seconds", "-1"}, status: ExitUsage},
		{name: "help", args: []string{"-h"}, status: ExitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			got := Capture(context.Background(), append(tc.args, "--models", models), &out, &errb)
			if got != tc.status {
				t.Fatalf("exit %d, want %d; stdout %.2000s stderr %s", got, tc.status, out.String(), errb.String())
			}
			if tc.last == "" && tc.final == "" {
				return
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if !strings.Contains(lines[len(lines)-1], tc.last) {
				t.Fatalf("last line %.2000s lacks %s", lines[len(lines)-1], tc.last)
			}
			if tc.final == "" {
				return
			}
			bodies := captureLines(t, out.String())
			start := bodies[0]
			if start["session_status"] != app.StatusReady || start["models_loaded"] != 5.0 || start["session_id"] == "" {
				t.Fatalf("start body %v", start)
			}
			for i, b := range bodies[1:] {
				want := app.StatusContinue
				if i == len(bodies)-2 {
					want = tc.final
				}
				if b["session_status"] != want || b["session_id"] != start["session_id"] || b["billing"] != nil {
					t.Fatalf("body %d: %v", i+1, b)
				}
			}
			if tc.final != app.StatusComplete {
				return
			}
			final := bodies[len(bodies)-1]
			pred, _ := final["prediction"].(map[string]any)
			if pred == nil || pred["vhs"] == nil || pred["rendered_image"] != nil {
				t.Fatalf("complete body %.2000v", final)
			}
			if _, ok := final["rectified_image"]; ok == (tc.name == "images to files") {
				t.Fatalf("rectified_image present %v with args %v", ok, tc.args)
			}
		})
	}
	for _, f := range []string{rect, rendered} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jpeg.DecodeConfig(bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
