package camera

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"vetlens/internal/clock"
)

// testVideo is the shipped test video (testdata/README.md): 45 frames,
// 960x540, MJPG, 15 fps.
const (
	testVideo       = "testdata/screen_sequence.avi"
	testVideoFrames = 45
)

// writeImage writes a w x h image of colour c (PNG or JPEG by extension).
func writeImage(t *testing.T, path string, w, h int, c color.RGBA) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	var err error
	if filepath.Ext(path) == ".png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	broken := filepath.Join(dir, "broken")
	for _, d := range []string{empty, broken} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(empty, "notes.txt"), "not an image")
	writeFile(t, filepath.Join(broken, "a.jpg"), "\xff\xd8\xff\xe0 truncated")
	writeFile(t, filepath.Join(broken, "b.png"), "not a png at all")
	text := filepath.Join(dir, "clip.avi")
	writeFile(t, text, "this is not a video")
	corrupt := filepath.Join(dir, "photo.jpg")
	writeFile(t, corrupt, "\xff\xd8\xff\xe0\x00\x10JFIF garbage")

	cases := []struct {
		name string
		spec string
		want error
	}{
		{"empty spec", "", ErrBadSpec},
		{"device without index", "device:", ErrBadSpec},
		{"device not a number", "device:cam", ErrBadSpec},
		{"negative device", "device:-1", ErrBadSpec},
		{"absent device", "device:97", ErrNoDevice},
		{"missing file", filepath.Join(dir, "nope.avi"), fs.ErrNotExist},
		{"missing file with file: prefix", "file:" + filepath.Join(dir, "nope"), fs.ErrNotExist},
		{"not a video", text, ErrUnreadable},
		{"corrupt image", corrupt, ErrUnreadable},
		{"folder without images", empty, ErrNoFrames},
		{"folder of broken images", broken, ErrNoFrames},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.spec)
			if !errors.Is(err, tc.want) {
				if s != nil {
					s.Close()
				}
				t.Fatalf("Open(%q): %v, want %v", tc.spec, err, tc.want)
			}
			if s != nil {
				t.Fatal("a source came back with the error")
			}
		})
	}
}

// readAll reads n frames (n < 0: until an error) and returns them with the
// error that stopped it (nil when n frames were read).
func readAll(t *testing.T, s *Source, n int) ([]Frame, error) {
	t.Helper()
	var out []Frame
	for n < 0 || len(out) < n {
		f, err := s.Next(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, nil
}

func checkFrame(t *testing.T, f Frame, index, w, h int) {
	t.Helper()
	if f.Index != index || f.Image == nil || f.Image.Bounds() != image.Rect(0, 0, w, h) || f.Time.IsZero() {
		t.Fatalf("frame %d: index %d, image %v, time %v; want %dx%d", index, f.Index, f.Image.Bounds(), f.Time, w, h)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(f.JPEG))
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("frame %d: JPEG %+v %v", index, cfg, err)
	}
}

func TestVideo(t *testing.T) {
	cases := []struct {
		name    string
		opts    []Option
		read    int // frames to read; -1: to the end
		wantErr error
		wantN   int
	}{
		{"to the end", []Option{NoPacing()}, -1, io.EOF, testVideoFrames},
		{"looping", []Option{NoPacing(), Loop()}, 2*testVideoFrames + 7, nil, 2*testVideoFrames + 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(testVideo, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Kind() != KindVideo {
				t.Fatalf("kind %v", s.Kind())
			}
			frames, err := readAll(t, s, tc.read)
			if !errors.Is(err, tc.wantErr) || len(frames) != tc.wantN {
				t.Fatalf("%d frames, %v; want %d, %v", len(frames), err, tc.wantN, tc.wantErr)
			}
			for i, f := range frames {
				checkFrame(t, f, i, 960, 540)
			}
			if tc.wantErr == io.EOF {
				if _, err := s.Next(context.Background()); err != io.EOF {
					t.Fatalf("Next after the end: %v", err)
				}
			} else if !bytes.Equal(frames[testVideoFrames].JPEG, frames[0].JPEG) {
				t.Fatal("the loop did not start over at the first frame")
			}
		})
	}
}

// Pacing on a fake clock that moves by exactly the waits the source asks
// for: frames are due one period apart from the first (Frame.Time is the
// clock's), a consumer that fell behind gets the next frame at once and no
// burst after it, and a frame waiting for its time gives up when ctx ends.
// The real rate is BenchmarkPacing's.
func TestPacing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		opts   []Option
		frames int
		period time.Duration
	}{
		{"native rate", nil, 8, period(15)}, // the video's 15 fps
		{"FPS option", []Option{FPS(100)}, 11, 10 * time.Millisecond},
		{"no pacing", []Option{NoPacing(), FPS(1)}, 11, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(t0).AutoAdvance()
			s, err := Open(testVideo, append(tc.opts, WithClock(clk))...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			frames, err := readAll(t, s, tc.frames)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range frames {
				if want := t0.Add(time.Duration(i) * tc.period); !f.Time.Equal(want) {
					t.Fatalf("frame %d at %v, want %v", i, f.Time.Sub(t0), want.Sub(t0))
				}
			}
		})
	}
	t.Run("fell behind", func(t *testing.T) {
		clk := clock.NewFake(t0).AutoAdvance()
		s, err := Open(testVideo, FPS(10), WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var at []time.Duration
		for i := 0; i < 4; i++ {
			if i == 2 {
				clk.Advance(350 * time.Millisecond) // the consumer is 3.5 frames late
			}
			f, err := s.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			at = append(at, f.Time.Sub(t0))
		}
		// 0, 100, then at once (450 ms, not a burst of the missed frames),
		// then one period later.
		want := []time.Duration{0, 100 * time.Millisecond, 450 * time.Millisecond, 550 * time.Millisecond}
		if !reflect.DeepEqual(at, want) {
			t.Fatalf("frames at %v, want %v", at, want)
		}
	})
	t.Run("ctx ends while waiting", func(t *testing.T) {
		clk := clock.NewFake(t0) // moves only when told: the wait never ends
		s, err := Open(testVideo, FPS(0.5), WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			clk.BlockUntil(1) // the second frame waits for its time
			cancel()
		}()
		if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Next at 0.5 fps, ctx cancelled while it waited: %v", err)
		}
	})
}

// period is the source's frame period at fps, computed as it computes it.
func period(fps float64) time.Duration { return time.Duration(float64(time.Second) / fps) }

// BenchmarkPacing plays the test video at its native rate on the wall
// clock and reports the frames a second it delivered (15 wanted).
func BenchmarkPacing(b *testing.B) {
	for b.Loop() {
		s, err := Open(testVideo)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		const n = 16
		for i := 0; i < n; i++ {
			if _, err := s.Next(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n-1)/time.Since(start).Seconds(), "fps")
		s.Close()
	}
}

func TestFolder(t *testing.T) {
	dir := t.TempDir()
	// Name order: a (40 px wide), b (broken), c (60), d (80); the text
	// file is not a frame.
	writeImage(t, filepath.Join(dir, "c.PNG"), 60, 40, color.RGBA{0, 255, 0, 255})
	writeImage(t, filepath.Join(dir, "a.jpg"), 40, 40, color.RGBA{255, 0, 0, 255})
	writeFile(t, filepath.Join(dir, "b.jpeg"), "\xff\xd8\xff broken")
	writeImage(t, filepath.Join(dir, "d.png"), 80, 40, color.RGBA{0, 0, 255, 255})
	writeFile(t, filepath.Join(dir, "readme.txt"), "hello")

	cases := []struct {
		name   string
		opts   []Option
		read   int
		want   []int // widths
		endErr error
	}{
		{"once", []Option{NoPacing()}, -1, []int{40, 60, 80}, io.EOF},
		{"looping", []Option{NoPacing(), Loop()}, 7, []int{40, 60, 80, 40, 60, 80, 40}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(dir, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			frames, err := readAll(t, s, tc.read)
			if !errors.Is(err, tc.endErr) || len(frames) != len(tc.want) {
				t.Fatalf("%d frames, %v", len(frames), err)
			}
			for i, f := range frames {
				checkFrame(t, f, i, tc.want[i], 40)
			}
			// The first frame is pure red: BGR from OpenCV became RGBA.
			if p := frames[0].Image.RGBAAt(20, 20); p.R < 250 || p.G > 5 || p.B > 5 || p.A != 255 {
				t.Fatalf("red pixel came out %v", p)
			}
			sk := s.Skipped()
			if len(sk) != 1 || !errors.Is(sk[0], ErrUnreadable) || !bytes.Contains([]byte(sk[0].Error()), []byte("b.jpeg")) {
				t.Fatalf("skipped %v, want b.jpeg once", sk)
			}
		})
	}
}

func TestImage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "screen.png")
	writeImage(t, path, 64, 48, color.RGBA{10, 200, 30, 255})
	cases := []struct {
		name   string
		opts   []Option
		read   int
		wantN  int
		endErr error
	}{
		{"once", []Option{NoPacing()}, -1, 1, io.EOF},
		{"looping", []Option{NoPacing(), Loop()}, 3, 3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open("file:"+path, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Kind() != KindImage {
				t.Fatalf("kind %v", s.Kind())
			}
			frames, err := readAll(t, s, tc.read)
			if !errors.Is(err, tc.endErr) || len(frames) != tc.wantN {
				t.Fatalf("%d frames, %v", len(frames), err)
			}
			for i, f := range frames {
				checkFrame(t, f, i, 64, 48)
				if i > 0 && (f.Image == frames[0].Image || !bytes.Equal(f.JPEG, frames[0].JPEG)) {
					t.Fatal("a looping image should give equal JPEGs in new images")
				}
			}
		})
	}
}

func TestClose(t *testing.T) {
	s, err := Open(testVideo, NoPacing())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// Probing absent cameras does not fail (this machine may have none; the
// list then is empty), and on Linux an index without /dev/videoN (its
// deviceNode) is never probed, so a machine without cameras answers at
// once (BenchmarkListDevices times it).
func TestListDevices(t *testing.T) {
	devs := ListDevices(8)
	for _, d := range devs {
		if d.Spec != "device:"+string(rune('0'+d.Index)) {
			t.Fatalf("device %+v", d)
		}
	}
	if deviceNode == "" {
		return
	}
	for n := 0; n < 8; n++ {
		_, err := os.Stat(deviceNode + strconv.Itoa(n))
		if deviceNodeMayExist(n) != (err == nil) {
			t.Fatalf("index %d: probed %v, %s%d: %v", n, deviceNodeMayExist(n), deviceNode, n, err)
		}
	}
	for _, d := range devs {
		if !deviceNodeMayExist(d.Index) {
			t.Fatalf("device %+v listed without its node", d)
		}
	}
}

// BenchmarkListDevices probes 8 indices (on a machine without cameras: no
// OpenCV call at all).
func BenchmarkListDevices(b *testing.B) {
	for b.Loop() {
		ListDevices(8)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindDevice: "device", KindVideo: "video", KindFolder: "folder", KindImage: "image", Kind(9): "kind(9)"} {
		if k.String() != want {
			t.Fatalf("%d: %s", k, k.String())
		}
	}
}
