// Command checkshots fails when a GUI screenshot is missing or blank: the
// Xvfb end-to-end run (make test-gui) checks the window really drew.
//
//	go run ./bench/checkshots --dir test-output/screenshots --want 00-capture-live,01-capture,02-review
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Blankness thresholds: a drawn window has many colours and contrast.
const (
	minColours = 16  // distinct colours after 4-bit quantization
	minStdDev  = 8.0 // luminance standard deviation, 0-255 scale
)

// Stats describe how much a screenshot varies.
type Stats struct {
	Colours int
	StdDev  float64
}

// Measure computes the stats of img.
func Measure(img image.Image) Stats {
	b := img.Bounds()
	seen := map[uint32]bool{}
	var sum, sq, n float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
		}
	}
	if n == 0 {
		return Stats{}
	}
	m := sum / n
	return Stats{Colours: len(seen), StdDev: math.Sqrt(math.Max(0, sq/n-m*m))}
}

// Blank reports whether the stats are those of an empty screen.
func (s Stats) Blank() bool { return s.Colours < minColours || s.StdDev < minStdDev }

func check(path string) (Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return Stats{}, fmt.Errorf("decode %s: %w", path, err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
		return Stats{}, fmt.Errorf("%s is only %dx%d", path, b.Dx(), b.Dy())
	}
	return Measure(img), nil
}

func main() {
	dir := flag.String("dir", "", "folder of PNG screenshots")
	want := flag.String("want", "", "comma-separated name prefixes that must each match a screenshot")
	flag.Parse()
	files, _ := filepath.Glob(filepath.Join(*dir, "*.png"))
	sort.Strings(files)
	failed := false
	if len(files) == 0 {
		fmt.Fprintf(os.Stderr, "checkshots: no PNG in %q\n", *dir)
		os.Exit(1)
	}
	for _, w := range strings.Split(*want, ",") {
		if w == "" {
			continue
		}
		found := false
		for _, f := range files {
			found = found || strings.HasPrefix(filepath.Base(f), w)
		}
		if !found {
			fmt.Fprintf(os.Stderr, "checkshots: no screenshot %s*.png\n", w)
			failed = true
		}
	}
	for _, f := range files {
		s, err := check(f)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "checkshots: %v\n", err)
			failed = true
		case s.Blank():
			fmt.Fprintf(os.Stderr, "checkshots: %s is blank (%d colours, luminance std %.1f)\n", filepath.Base(f), s.Colours, s.StdDev)
			failed = true
		default:
			fmt.Printf("%s: %d colours, luminance std %.1f\n", filepath.Base(f), s.Colours, s.StdDev)
		}
	}
	if failed {
		os.Exit(1)
	}
}
