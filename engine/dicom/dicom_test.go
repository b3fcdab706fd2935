package dicom_test

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"vetlens/engine/dicom"
	"vetlens/internal/dicomtest"
)

// TestDecodeFixtures opens every dcmtk-made file: each shows the source
// phantom's grey levels as its encoding says (mean absolute difference
// and correlation against the expected image), keeps its pixel spacing and
// patient tags, or is refused naming its transfer syntax.
func TestDecodeFixtures(t *testing.T) {
	set := dicomtest.Build(t)
	src := set.Source
	for _, f := range set.Fixtures {
		t.Run(f.Name, func(t *testing.T) {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !dicom.Is(b) {
				t.Fatal("Is = false for a Part 10 file")
			}
			img, err := dicom.Decode(b, dicom.Limits{})
			if f.Want == nil {
				if !errors.Is(err, dicom.ErrUnsupportedTransferSyntax) || !strings.Contains(err.Error(), f.ErrName) || !strings.Contains(err.Error(), f.TransferSyntax) {
					t.Fatalf("err = %v, want ErrUnsupportedTransferSyntax naming %q (%s)", err, f.ErrName, f.TransferSyntax)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.TransferSyntaxUID != f.TransferSyntax {
				t.Errorf("transfer syntax %s, want %s", img.TransferSyntaxUID, f.TransferSyntax)
			}
			if img.Gray.Bounds() != src.Bounds() {
				t.Fatalf("bounds %v, want %v", img.Gray.Bounds(), src.Bounds())
			}
			want := make([]uint8, len(src.Pix))
			for i, v := range src.Pix {
				want[i] = f.Want(v)
			}
			mad, corr := compare(img.Gray.Pix, want)
			maxMAD := 0.05 // rounding only
			if !f.Exact {
				maxMAD = 1.5 // dcmtk's own JPEG decoding
			}
			t.Logf("%s: mean abs diff %.3f, correlation %.5f, VOI %s", f.Name, mad, corr, img.VOI)
			wantVOI := map[string]string{"mono1-16bit": "full range", "windowed-12bit": "window 924.5/1025", "voilut-10bit-bigendian": "VOI LUT"}[f.Name]
			if wantVOI == "" {
				wantVOI = "stored values"
			}
			if img.VOI != wantVOI {
				t.Errorf("VOI %q, want %q", img.VOI, wantVOI)
			}
			if mad > maxMAD || corr < 0.995 {
				t.Errorf("grey levels: mean abs diff %.3f (max %.2f), correlation %.5f (min 0.995)", mad, maxMAD, corr)
			}
			if img.PixelSpacing != [2]float64{0.1, 0.12} || img.SpacingTag != "PixelSpacing" {
				t.Errorf("pixel spacing %v from %q", img.PixelSpacing, img.SpacingTag)
			}
			tg := img.Tags
			wantTags := dicom.Tags{PatientID: dicomtest.PatientID, PatientName: "Rex Smith", AnimalName: "Rex", Species: dicomtest.Species,
				Breed: dicomtest.Breed, Sex: "M", Neutered: "ALTERED", BirthDate: time.Date(2019, 4, 1, 0, 0, 0, 0, time.UTC),
				WeightKg: 9.5, ResponsiblePerson: "Anna Smith", StudyDate: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Modality: "DX",
				PatientNameDICOM: "Smith^Rex", StudyInstanceUID: tg.StudyInstanceUID}
			if tg.StudyInstanceUID == "" { // img2dcm makes one up
				t.Error("no Study Instance UID")
			}
			if tg != wantTags {
				t.Errorf("tags\n got %+v\nwant %+v", tg, wantTags)
			}
		})
	}
}

// compare is the mean absolute difference and the correlation of two
// grey images.
func compare(got, want []uint8) (mad, corr float64) {
	var sa, sb, saa, sbb, sab float64
	for i := range got {
		a, b := float64(got[i]), float64(want[i])
		mad += math.Abs(a - b)
		sa, sb, saa, sbb, sab = sa+a, sb+b, saa+a*a, sbb+b*b, sab+a*b
	}
	n := float64(len(got))
	cov := sab/n - sa/n*sb/n
	corr = cov / math.Sqrt((saa/n-sa/n*sa/n)*(sbb/n-sb/n*sb/n))
	return mad / n, corr
}

// TestDecodeRefusesBadFiles: truncated, lying or oversized files are
// refused with the right sentinel before the parser allocates from them.
func TestDecodeRefusesBadFiles(t *testing.T) {
	set := dicomtest.Build(t)
	good, err := os.ReadFile(set.Get(t, "mono2-8bit").Path)
	if err != nil {
		t.Fatal(err)
	}
	pixelAt := bytes.Index(good, []byte{0xe0, 0x7f, 0x10, 0x00})
	if pixelAt < 0 {
		t.Fatal("no pixel data tag")
	}
	lying := bytes.Clone(good)
	copy(lying[pixelAt+8:], []byte{0xf0, 0xff, 0xff, 0x7f}) // pixel data claims 2 GB
	rows := bytes.Index(good, []byte{0x28, 0x00, 0x10, 0x00, 'U', 'S', 2, 0})
	huge := bytes.Clone(good)
	huge[rows+8], huge[rows+9] = 0xff, 0xff // 65535 rows
	refuse := func(w, h int) error { return fmt.Errorf("%dx%d too large for this test", w, h) }
	for _, tc := range []struct {
		name string
		b    []byte
		lim  dicom.Limits
		want error
	}{
		{"JPEG bytes", []byte("\xff\xd8\xff\xe0 not a dicom at all, just long enough to have an offset 128......................................................................................"), dicom.Limits{}, dicom.ErrNotDICOM},
		{"empty", nil, dicom.Limits{}, dicom.ErrNotDICOM},
		{"meta only", good[:140], dicom.Limits{}, dicom.ErrCorrupt},
		{"truncated pixel data", good[:len(good)-1000], dicom.Limits{}, dicom.ErrCorrupt},
		{"pixel data length over the file", lying, dicom.Limits{}, dicom.ErrCorrupt},
		{"rows disagree with the pixel data", huge, dicom.Limits{}, dicom.ErrCorrupt},
		{"over the size check", good, dicom.Limits{CheckSize: refuse}, nil},
		{"over the memory bound", good, dicom.Limits{MaxBytes: 1 << 20}, dicom.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dicom.Decode(tc.b, tc.lim)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), "640x480 too large for this test") {
					t.Fatalf("err = %v, want the size check's", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, herr := dicom.ReadHeader(tc.b, tc.lim); tc.name != "truncated pixel data" && !errors.Is(herr, tc.want) {
				t.Errorf("ReadHeader err = %v, want %v", herr, tc.want)
			}
		})
	}
}

// TestDecodeRefusesElementFloods: a deflated data set of millions of tiny
// elements (a few kB on the wire) is refused before the parser builds
// them.
func TestDecodeRefusesElementFloods(t *testing.T) {
	var ds bytes.Buffer
	for range dicom.MaxElements + 1 { // (0009,0010) LO "", a private creator, empty
		ds.Write([]byte{0x09, 0x00, 0x10, 0x00, 'L', 'O', 0, 0})
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(ds.Bytes())
	w.Close()
	ts := dicom.DeflatedExplicitVRLE
	meta := []byte{0x02, 0x00, 0x10, 0x00, 'U', 'I', byte(len(ts)), 0}
	file := append(append(append(make([]byte, 128), "DICM"...), meta...), ts...)
	file = append(file, z.Bytes()...)
	t.Logf("%d bytes deflate to %d", ds.Len(), z.Len())
	if _, err := dicom.Decode(file, dicom.Limits{MaxBytes: 256 << 20}); !errors.Is(err, dicom.ErrCorrupt) || !strings.Contains(err.Error(), "elements") {
		t.Fatalf("err = %v, want ErrCorrupt for too many elements", err)
	}
}
