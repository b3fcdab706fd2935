package report

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	return img
}

func f(v float64) *float64 { return &v }

// parsePDF checks the file's structure the way a reader would: every
// cross-reference offset points at its object, every stream's /Length is
// its size, and startxref points at the table. It returns the objects'
// bodies by number.
func parsePDF(t *testing.T, b []byte) map[int][]byte {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
		t.Fatalf("not a PDF: %q ... %q", b[:min(20, len(b))], b[max(0, len(b)-20):])
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(b[xref:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d does not point at the xref table", xref)
	}
	lines := strings.Split(string(b[xref:]), "\n")
	n, _ := strconv.Atoi(strings.Fields(lines[1])[1])
	objs := map[int][]byte{}
	for id := 1; id < n; id++ {
		off, err := strconv.Atoi(lines[2+id][:10])
		if err != nil {
			t.Fatalf("xref line %q", lines[2+id])
		}
		head := []byte(strconv.Itoa(id) + " 0 obj\n")
		if !bytes.HasPrefix(b[off:], head) {
			t.Fatalf("object %d: offset %d points at %q", id, off, b[off:off+12])
		}
		end := bytes.Index(b[off:], []byte("\nendobj\n"))
		body := b[off+len(head) : off+end]
		if lm := regexp.MustCompile(`/Length (\d+) >>\nstream\n`).FindSubmatchIndex(body); lm != nil {
			l, _ := strconv.Atoi(string(body[lm[2]:lm[3]]))
			data := body[lm[1]:]
			if !bytes.HasSuffix(data, []byte("\nendstream")) || len(data)-len("\nendstream") != l {
				t.Fatalf("object %d: /Length %d, stream holds %d bytes", id, l, len(data)-len("\nendstream"))
			}
			body = data[:l]
		}
		objs[id] = body
	}
	return objs
}

func TestWritePDF(t *testing.T) {
	date := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		r       Report
		want    []string
		notWant []string
	}{
		{
			name: "measured",
			r: Report{PatientID: "Rex (4821)", Date: date, Image: testImage(300, 200), VHS: f(10.84), VLAS: f(2.13),
				Confidence: "optimal", Result: "Result 1: high confidence", Reading: "The heart is larger than normal (VHS above 10.5), consistent with cardiomegaly.",
				ModelVersion: "v3.0.0-synthetic-phantom.1", VHSRange: "8.5-10.5", VLASRange: "< 2.5", Kind: "Model measurement"},
			want:    []string{`(Patient ID: Rex \(4821\)`, "VHS 10.84", "VLAS 2.13", "optimal", "v3.0.0-synthetic-phantom.1", "cardiomegaly", "synthetic phantom", "(Measurement: Model measurement.)"},
			notWant: []string{"clinician", "The model measured"},
		},
		{
			name: "edited, no VLAS, non-Latin patient id",
			r: Report{PatientID: "Bjørn-犬", Date: date, Image: testImage(120, 400), VHS: f(9.5), Clinician: true, ModelVHS: f(9.91),
				Kind: "Model landmarks corrected by clinician", Result: "Result 4", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"},
			want: []string{`Bj\370rn-?`, "VLAS not measured", "(Measurement: Model landmarks corrected by clinician. The model measured VHS 9.91, VLAS not measured.)", "Confidence: -"},
		},
		{
			name: "placed by hand on a rejected image",
			r: Report{PatientID: "Rex", Date: date, Image: testImage(200, 200), VHS: f(10.2), VLAS: f(2.1), Clinician: true,
				Kind: "Placed by hand by clinician", Result: "Result 6: Image rejected, not a valid radiograph", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"},
			want:    []string{"(Measurement: Placed by hand by clinician. The model gave no values for this image.)", "VHS 10.20", "VLAS 2.10", "Result 6"},
			notWant: []string{"The model measured"},
		},
		{
			name:    "kind not stated",
			r:       Report{Date: date, Image: testImage(50, 50), VHS: f(9), Result: "Result 1", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"},
			want:    []string{"Patient ID: not given"},
			notWant: []string{"Measurement:"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WritePDF(&buf, tc.r); err != nil {
				t.Fatal(err)
			}
			objs := parsePDF(t, buf.Bytes())
			if len(objs) != 8 {
				t.Fatalf("%d objects", len(objs))
			}
			img, err := jpeg.Decode(bytes.NewReader(objs[6]))
			if err != nil {
				t.Fatalf("image stream: %v", err)
			}
			if img.Bounds() != tc.r.Image.Bounds() {
				t.Fatalf("image %v, want %v", img.Bounds(), tc.r.Image.Bounds())
			}
			content := string(objs[7])
			for _, w := range tc.want {
				if !strings.Contains(content, w) {
					t.Errorf("page content lacks %q:\n%s", w, content)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(content, w) {
					t.Errorf("page content has %q", w)
				}
			}
			// The image is drawn inside the page margins.
			m := regexp.MustCompile(`q ([\d.]+) 0 0 ([\d.]+) ([\d.]+) ([\d.]+) cm /Im1 Do Q`).FindStringSubmatch(content)
			if m == nil {
				t.Fatal("image not placed")
			}
			v := make([]float64, 4)
			for i := range v {
				v[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			if v[2] < margin-0.01 || v[3] < margin || v[2]+v[0] > pageW-margin+0.01 || v[3]+v[1] > pageH-margin {
				t.Errorf("image placed at %v, outside the margins", v)
			}
		})
	}
}

func TestWritePDFNoImage(t *testing.T) {
	if err := WritePDF(&bytes.Buffer{}, Report{}); err == nil {
		t.Fatal("a report without an image must fail")
	}
}
