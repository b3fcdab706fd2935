package capture

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// greyJPEG is the picture in the JPEG or PNG file path, converted to grey
// and encoded as JPEG: a camera's monochrome mode, or a photo greyed
// before it was sent.
func greyJPEG(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	g := image.NewGray(img.Bounds())
	draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
	var w bytes.Buffer
	if err := jpeg.Encode(&w, g, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return w.Bytes()
}

// TestServicePlainFile: the one rule for frames read from files. With the
// shipped PoP models a grey radiograph file is a plain file, and neither a
// photo of a screen in colour nor the same photo greyed is (the learned
// pipeline takes a grey photo of a screen on its stronger evidence); a
// colour frame never is. The classical pipeline cannot tell a grey photo
// of a screen, so there it is a plain file. Undecodable bytes are an
// error.
func TestServicePlainFile(t *testing.T) {
	pd := filepath.Join("..", "..", "engine", "pop", "testdata")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(pd, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	learned := NewService(nil, nil, PoP{Models: shippedPoPModels(t)})
	classical := NewService(nil, nil, PoP{})
	for _, tc := range []struct {
		name               string
		frame              []byte
		learned, classical bool
	}{
		{"grey radiograph file (PNG)", read("radiograph_0000.png"), true, true},
		{"grey radiograph file (JPEG)", read("radiograph_0001.jpg"), true, true},
		{"tinted radiograph (colour)", read("tinted_radiograph.png"), false, false},
		{"colour photo of a screen", read("screen_0000.jpg"), false, false},
		{"grey photo of a screen", greyJPEG(t, filepath.Join(pd, "screen_0000.jpg")), false, true},
		{"another grey photo of a screen", greyJPEG(t, filepath.Join(pd, "screen_0005.jpg")), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []struct {
				name string
				svc  *Service
				want bool
			}{{"learned", learned, tc.learned}, {"classical", classical, tc.classical}} {
				got, err := s.svc.PlainFile(context.Background(), tc.frame)
				if err != nil || got != s.want {
					t.Errorf("%s: plain file %v, %v; want %v", s.name, got, err, s.want)
				}
			}
		})
	}
	if _, err := learned.PlainFile(context.Background(), []byte("not an image")); err == nil {
		t.Error("undecodable frame: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := learned.PlainFile(ctx, read("radiograph_0000.png")); err == nil {
		t.Error("cancelled context: no error")
	}
}
