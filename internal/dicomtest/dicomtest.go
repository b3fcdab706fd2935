// Package dicomtest makes DICOM test files from a cardiac phantom with
// Debian's dcmtk (img2dcm, dcmdjpeg, dcmcjpeg, dcmcrle, dcmcjpls, dcmconv
// and dcmodify for tags and pixel data), so that no binary DICOM is
// committed. Each fixture says how its grey levels relate to the source
// phantom's, or which transfer syntax it should be refused for.
package dicomtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// PhantomPath is the source radiograph: a 640x480 grey PNG of a simulated
// canine lateral thorax that the shipped models measure (code 2).
func PhantomPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "engine", "cardiac", "testdata", "phantoms", "xraysim_1_640x480.png")
}

// Patient tags written into every fixture.
const (
	PatientID         = "VL-0042"
	PatientName       = "Smith^Rex"
	Species           = "Canine"
	Breed             = "Cavalier King Charles Spaniel"
	Sex               = "M"
	Neutered          = "ALTERED"
	BirthDate         = "20190401"
	WeightKg          = "9.5"
	ResponsiblePerson = "Smith^Anna"
	StudyDate         = "20261120"
	PixelSpacing      = `0.1\0.12`
)

// Fixture is one DICOM test file.
type Fixture struct {
	// Name says what the file exercises.
	Name string
	// Path is the file.
	Path string
	// TransferSyntax is the UID the file is written in.
	TransferSyntax string
	// Want maps a source phantom grey level to the grey the file must
	// display (nil when the file must be refused).
	Want func(v uint8) uint8
	// Exact is false when dcmtk decoded the phantom's JPEG itself (its
	// IDCT may differ from Go's by a grey level or two).
	Exact bool
	// ErrName is what the refusal must name (the transfer syntax).
	ErrName string
}

// Bytes reads the file.
func (f Fixture) Bytes(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Set is the fixtures and their source.
type Set struct {
	// Source is the phantom as the fixtures hold it: its grey baseline
	// JPEG (quality 95) as Go decodes it.
	Source *image.Gray
	// SourceJPEG is that JPEG's path (img2dcm encapsulates its stream).
	SourceJPEG string
	// Fixtures are the files, by Name.
	Fixtures []Fixture
}

// Get returns the fixture named name.
func (s *Set) Get(t testing.TB, name string) Fixture {
	for _, f := range s.Fixtures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no DICOM fixture %q", name)
	return Fixture{}
}

// Tools are the dcmtk commands the fixtures need.
var Tools = []string{"img2dcm", "dcmdjpeg", "dcmcjpeg", "dcmcrle", "dcmcjpls", "dcmconv", "dcmodify"}

// Available reports whether dcmtk is installed (make deps installs it).
func Available() error {
	for _, tool := range Tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("dcmtk's %s not found (apt-get install dcmtk, or make deps): %w", tool, err)
		}
	}
	return nil
}

// Build makes the fixtures in the test's temporary directory (about a
// second of dcmtk runs) and skips the test when dcmtk is missing.
func Build(t testing.TB) *Set {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("DICOM fixtures: %v", err)
	}
	s, err := build(t.TempDir())
	if err != nil {
		t.Fatalf("DICOM fixtures: %v", err)
	}
	return s
}

// run runs one dcmtk command in dir.
func run(dir string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// modify runs dcmodify -nb with "-i" insertions and "-mf" file values on
// file, giving it a SOP Instance UID of its own (-gin).
func modify(dir, file string, insert []string, fromFile map[string][]byte) error {
	args := []string{"-nb", "-gin"}
	for _, kv := range insert {
		args = append(args, "-i", kv)
	}
	for tag, data := range fromFile {
		name := strings.NewReplacer("(", "", ")", "", ",", "-").Replace(tag) + ".raw"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
		args = append(args, "-mf", tag+"="+name)
	}
	return run(dir, "dcmodify", append(args, file)...)
}

// words writes 16-bit little-endian samples.
func words(n int, f func(i int) uint16) []byte {
	var b bytes.Buffer
	for i := range n {
		binary.Write(&b, binary.LittleEndian, f(i))
	}
	return b.Bytes()
}

func build(dir string) (*Set, error) {
	f, err := os.Open(PhantomPath())
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("phantom: %w", err)
	}
	grey := image.NewGray(img.Bounds())
	draw.Draw(grey, grey.Bounds(), img, img.Bounds().Min, draw.Src)
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, grey, &jpeg.Options{Quality: 95}); err != nil {
		return nil, err
	}
	sourceJPEG := filepath.Join(dir, "source.jpg")
	if err := os.WriteFile(sourceJPEG, jb.Bytes(), 0o644); err != nil {
		return nil, err
	}
	dec, err := jpeg.Decode(bytes.NewReader(jb.Bytes()))
	if err != nil {
		return nil, err
	}
	src, ok := dec.(*image.Gray)
	if !ok {
		return nil, fmt.Errorf("source JPEG decodes to %T, want grey", dec)
	}
	n := len(src.Pix)
	s := &Set{Source: src, SourceJPEG: sourceJPEG}
	path := func(name string) string { return filepath.Join(dir, name+".dcm") }
	cp := func(from, to string) error {
		b, err := os.ReadFile(path(from))
		if err != nil {
			return err
		}
		return os.WriteFile(path(to), b, 0o644)
	}
	identity := func(v uint8) uint8 { return v }

	// JPEG baseline: the phantom's own JPEG stream, encapsulated by img2dcm.
	if err := run(dir, "img2dcm", sourceJPEG, path("jpeg-baseline")); err != nil {
		return nil, err
	}
	tags := []string{"(0010,0010)=" + PatientName, "(0010,0020)=" + PatientID, "(0010,2201)=" + Species,
		"(0010,2292)=" + Breed, "(0010,0040)=" + Sex, "(0010,2203)=" + Neutered, "(0010,0030)=" + BirthDate,
		"(0010,1030)=" + WeightKg, "(0010,2297)=" + ResponsiblePerson, "(0008,0020)=" + StudyDate,
		"(0008,0060)=DX", "(0028,0030)=" + PixelSpacing}
	if err := modify(dir, path("jpeg-baseline"), tags, nil); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "jpeg-baseline", Path: path("jpeg-baseline"), TransferSyntax: "1.2.840.10008.1.2.4.50", Want: identity, Exact: true})

	// MONOCHROME2 8-bit, uncompressed (explicit VR little endian) by dcmdjpeg.
	if err := run(dir, "dcmdjpeg", path("jpeg-baseline"), path("mono2-8bit")); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "mono2-8bit", Path: path("mono2-8bit"), TransferSyntax: "1.2.840.10008.1.2.1", Want: identity})

	// MONOCHROME1 16-bit, implicit VR: stored (255-v)*257, no window, so the
	// frame's full range is shown, inverted.
	lo, hi := uint8(255), uint8(0)
	for _, v := range src.Pix {
		lo, hi = min(lo, v), max(hi, v)
	}
	stretch := func(v uint8) uint8 {
		return uint8((float64(v-lo)/float64(hi-lo))*255 + 0.5)
	}
	if err := cp("mono2-8bit", "mono1-16bit-explicit"); err != nil {
		return nil, err
	}
	if err := modify(dir, path("mono1-16bit-explicit"),
		[]string{"(0028,0100)=16", "(0028,0101)=16", "(0028,0102)=15", "(0028,0004)=MONOCHROME1"},
		map[string][]byte{"(7fe0,0010)": words(n, func(i int) uint16 { return uint16(255-src.Pix[i]) * 257 })}); err != nil {
		return nil, err
	}
	if err := run(dir, "dcmconv", "+ti", path("mono1-16bit-explicit"), path("mono1-16bit")); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "mono1-16bit", Path: path("mono1-16bit"), TransferSyntax: "1.2.840.10008.1.2", Want: stretch, Exact: true})

	// Windowed 12-bit: stored v*16, rescale 0.5 and -100 (so the modality
	// value is 8v-100), window centre 924.5 and width 1025: v 64..192
	// spans black to white, the rest is clipped.
	windowed := func(v uint8) uint8 {
		y := 255 * ((float64(v)-128)/128 + 0.5)
		return uint8(min(255, max(0, y)) + 0.5)
	}
	if err := cp("mono2-8bit", "windowed-12bit"); err != nil {
		return nil, err
	}
	if err := modify(dir, path("windowed-12bit"),
		[]string{"(0028,0100)=16", "(0028,0101)=12", "(0028,0102)=11", "(0028,1053)=0.5", "(0028,1052)=-100",
			"(0028,1050)=924.5", "(0028,1051)=1025"},
		map[string][]byte{"(7fe0,0010)": words(n, func(i int) uint16 { return uint16(src.Pix[i]) * 16 })}); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "windowed-12bit", Path: path("windowed-12bit"), TransferSyntax: "1.2.840.10008.1.2.1", Want: windowed, Exact: true})

	// VOI LUT, 10-bit, big endian: stored v*4; the LUT (1024 entries of 8
	// bits) maps stored s to 255 - s/4, so the image shows inverted; a
	// window is present too and must lose to the LUT.
	if err := cp("mono2-8bit", "voilut-10bit-explicit"); err != nil {
		return nil, err
	}
	lut := make([]string, 1024)
	for i := range lut {
		lut[i] = fmt.Sprintf("%04x", 255-i/4)
	}
	if err := modify(dir, path("voilut-10bit-explicit"),
		[]string{"(0028,0100)=16", "(0028,0101)=10", "(0028,0102)=9", "(0028,1050)=100", "(0028,1051)=10",
			`(0028,3010)[0].(0028,3002)=1024\0\8`, "(0028,3010)[0].(0028,3006)=" + strings.Join(lut, `\`)},
		map[string][]byte{"(7fe0,0010)": words(n, func(i int) uint16 { return uint16(src.Pix[i]) * 4 })}); err != nil {
		return nil, err
	}
	if err := run(dir, "dcmconv", "+tb", path("voilut-10bit-explicit"), path("voilut-10bit-bigendian")); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "voilut-10bit-bigendian", Path: path("voilut-10bit-bigendian"), TransferSyntax: "1.2.840.10008.1.2.2",
		Want: func(v uint8) uint8 { return 255 - v }, Exact: true})

	// Multi-frame 8-bit: the phantom, then its negative; the first is shown.
	if err := cp("mono2-8bit", "multiframe-8bit"); err != nil {
		return nil, err
	}
	frames := append(append([]byte{}, src.Pix...), make([]byte, n)...)
	for i, v := range src.Pix {
		frames[n+i] = 255 - v
	}
	if err := modify(dir, path("multiframe-8bit"), []string{"(0028,0008)=2"}, map[string][]byte{"(7fe0,0010)": frames}); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "multiframe-8bit", Path: path("multiframe-8bit"), TransferSyntax: "1.2.840.10008.1.2.1", Want: identity, Exact: true})

	// Deflated explicit VR little endian.
	if err := run(dir, "dcmconv", "+td", path("mono2-8bit"), path("deflated-8bit")); err != nil {
		return nil, err
	}
	s.Fixtures = append(s.Fixtures, Fixture{Name: "deflated-8bit", Path: path("deflated-8bit"), TransferSyntax: "1.2.840.10008.1.2.1.99", Want: identity})

	// Transfer syntaxes the Go decoders cannot read.
	for _, u := range []struct {
		name, tool, flag, ts, errName string
		from                          string
	}{
		{"rle", "dcmcrle", "", "1.2.840.10008.1.2.5", "RLE Lossless", "mono2-8bit"},
		{"jpeg-lossless", "dcmcjpeg", "", "1.2.840.10008.1.2.4.70", "JPEG Lossless", "mono2-8bit"},
		{"jpeg-ls", "dcmcjpls", "", "1.2.840.10008.1.2.4.80", "JPEG-LS Lossless", "mono2-8bit"},
		{"jpeg-extended-12bit", "dcmcjpeg", "+ee", "1.2.840.10008.1.2.4.51", "JPEG Extended", "windowed-12bit"},
	} {
		args := []string{path(u.from), path(u.name)}
		if u.flag != "" {
			args = append([]string{u.flag}, args...)
		}
		if err := run(dir, u.tool, args...); err != nil {
			return nil, err
		}
		s.Fixtures = append(s.Fixtures, Fixture{Name: u.name, Path: path(u.name), TransferSyntax: u.ts, ErrName: u.errName})
	}
	return s, nil
}
