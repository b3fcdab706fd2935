// Command gen writes the JPEG or PNG frames of a folder, in name order, into
// an MJPG .avi with gocv's VideoWriter: the test video of platform/camera
// (testdata/README.md says how it was made). Frames of another size are
// resized to -size.
//
//	go run ./platform/camera/testdata/gen -frames DIR -out FILE.avi [-fps 15] [-size 960x540]
package main

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gocv.io/x/gocv"
)

func main() {
	frames := flag.String("frames", "", "folder of JPEG/PNG frames (name order)")
	out := flag.String("out", "", "output .avi")
	fps := flag.Float64("fps", 15, "frame rate written into the video")
	size := flag.String("size", "960x540", "frame size WxH")
	flag.Parse()
	if err := run(*frames, *out, *fps, *size); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func run(dir, out string, fps float64, size string) error {
	if dir == "" || out == "" {
		return errors.New("-frames and -out are required")
	}
	var w, h int
	if _, err := fmt.Sscanf(size, "%dx%d", &w, &h); err != nil || w <= 0 || h <= 0 {
		return fmt.Errorf("bad -size %q", size)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".jpg", ".jpeg", ".png":
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no JPEG or PNG frames in %s", dir)
	}
	vw, err := gocv.VideoWriterFile(out, "MJPG", fps, w, h, true)
	if err != nil {
		return fmt.Errorf("open %s: %w", out, err)
	}
	defer vw.Close()
	if !vw.IsOpened() {
		return fmt.Errorf("open %s: the MJPG writer did not open", out)
	}
	resized := gocv.NewMat()
	defer resized.Close()
	for _, f := range files {
		m := gocv.IMRead(f, gocv.IMReadColor)
		if m.Empty() {
			m.Close()
			return fmt.Errorf("read %s: not a decodable image", f)
		}
		frame := m
		if m.Cols() != w || m.Rows() != h {
			gocv.Resize(m, &resized, image.Pt(w, h), 0, 0, gocv.InterpolationArea)
			frame = resized
		}
		err := vw.Write(frame)
		m.Close()
		if err != nil {
			return fmt.Errorf("write %s: %w", f, err)
		}
	}
	fmt.Printf("wrote %d frames (%dx%d, %g fps) to %s\n", len(files), w, h, fps, out)
	return nil
}
