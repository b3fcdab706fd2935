package report

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func f(v float64) *float64 { return &v }

var date = time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)

// stripes is a w x h image of len(cs) vertical stripes, one colour each.
func stripes(w, h int, cs ...color.Color) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, cs[x*len(cs)/w])
		}
	}
	return img
}

// grayStripes is stripes as a one-channel *image.Gray, the kind of image
// a grey radiograph decodes to.
func grayStripes(w, h int, levels ...uint8) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Pix[y*img.Stride+x] = levels[x*len(levels)/w]
		}
	}
	return img
}

func write(t *testing.T, r Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePDF(&buf, r); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b[max(0, len(b)-32):], []byte("%%EOF")) {
		t.Fatalf("not a PDF: %q ... %q", b[:min(16, len(b))], b[max(0, len(b)-16):])
	}
	return buf.Bytes()
}

// poppler runs a poppler-utils tool (make deps installs them) on the PDF
// and returns its standard output; args come before the file name, and
// "-" after it for the tools that need it to write to standard output.
func poppler(t *testing.T, pdf []byte, tool string, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s not found: install poppler-utils (make deps)", tool)
	}
	file := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, file)
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	out, err := exec.Command(path, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return out
}

// pageText is the page's text as pdftotext extracts it in layout order,
// runs of white space as one space.
func pageText(t *testing.T, pdf []byte) string {
	t.Helper()
	return strings.Join(strings.Fields(string(poppler(t, pdf, "pdftotext", "-layout", "-enc", "UTF-8"))), " ")
}

// render rasterises the page with pdftoppm at 72 dpi (one pixel a point).
func render(t *testing.T, pdf []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(poppler(t, pdf, "pdftoppm", "-png", "-r", "72", "-singlefile")))
	if err != nil {
		t.Fatalf("pdftoppm output: %v", err)
	}
	return img
}

// near counts the page's pixels within tol of c on every channel and
// returns the box of the rows and columns holding at least 40 of them (a
// block of colour, not the anti-aliased edges of text).
func near(img image.Image, c color.RGBA, tol int) (int, image.Rectangle) {
	b := img.Bounds()
	n, rows, cols := 0, make([]int, b.Dy()), make([]int, b.Dx())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-int(c.R)) <= tol && abs(int(g>>8)-int(c.G)) <= tol && abs(int(bl>>8)-int(c.B)) <= tol {
				n++
				rows[y-b.Min.Y]++
				cols[x-b.Min.X]++
			}
		}
	}
	span := func(counts []int) (lo, hi int) {
		lo, hi = -1, -1
		for i, k := range counts {
			if k >= 40 {
				if lo < 0 {
					lo = i
				}
				hi = i + 1
			}
		}
		return lo, hi
	}
	x0, x1 := span(cols)
	y0, y1 := span(rows)
	return n, image.Rect(x0, y0, x1, y1).Add(b.Min)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// chromatic counts pixels whose channels differ by more than tol.
func chromatic(img image.Image, tol int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if max(abs(int(r>>8)-int(g>>8)), abs(int(g>>8)-int(bl>>8)), abs(int(r>>8)-int(bl>>8))) > tol {
				n++
			}
		}
	}
	return n
}

// embeddedImages returns each image XObject's colour space and its
// decoded JPEG stream.
func embeddedImages(t *testing.T, pdf []byte) (spaces []string, imgs []image.Image) {
	t.Helper()
	re := regexp.MustCompile(`(?s)/Subtype /Image.*?/ColorSpace /(\w+).*?/Filter /DCTDecode\s*/Length (\d+)\s*>>\s*stream\r?\n`)
	for _, m := range re.FindAllSubmatchIndex(pdf, -1) {
		n, _ := strconv.Atoi(string(pdf[m[4]:m[5]]))
		img, err := jpeg.Decode(bytes.NewReader(pdf[m[1] : m[1]+n]))
		if err != nil {
			t.Fatalf("image stream: %v", err)
		}
		spaces = append(spaces, string(pdf[m[2]:m[3]]))
		imgs = append(imgs, img)
	}
	return spaces, imgs
}

// TestWritePDFImages: a grey image (one channel, as grey radiographs
// decode) and a colour image both come out with their own colours: the
// embedded JPEG's colour space matches its channels, and the page
// rendered by pdftoppm shows each stripe's colour, inside the margins.
// (The hand-written writer labelled a grey JPEG DeviceRGB and the page
// showed noise.)
func TestWritePDFImages(t *testing.T) {
	grey1, grey2 := color.RGBA{60, 60, 60, 255}, color.RGBA{190, 190, 190, 255}
	red, green, blue := color.RGBA{210, 40, 40, 255}, color.RGBA{40, 170, 60, 255}, color.RGBA{40, 60, 200, 255}
	for _, tc := range []struct {
		name      string
		img       image.Image
		space     string
		want      []color.RGBA
		colourful bool
	}{
		{"grey", grayStripes(300, 200, 60, 190), "DeviceGray", []color.RGBA{grey1, grey2}, false},
		{"colour", stripes(300, 200, red, green, blue), "DeviceRGB", []color.RGBA{red, green, blue}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := write(t, Report{PatientID: "Rex", Date: date, Image: tc.img, VHS: f(10.1), Result: "Result 1", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"})
			spaces, imgs := embeddedImages(t, pdf)
			if len(imgs) != 1 || spaces[0] != tc.space || imgs[0].Bounds() != tc.img.Bounds() {
				t.Fatalf("embedded images %v %d, want one %s of %v", spaces, len(imgs), tc.space, tc.img.Bounds())
			}
			// The stream decodes to the picture: the middle of each stripe.
			for i, c := range tc.want {
				x := (2*i + 1) * 300 / (2 * len(tc.want))
				r, g, b, _ := imgs[0].At(x, 100).RGBA()
				if abs(int(r>>8)-int(c.R)) > 8 || abs(int(g>>8)-int(c.G)) > 8 || abs(int(b>>8)-int(c.B)) > 8 {
					t.Errorf("embedded stripe %d is %d,%d,%d, want %v", i, r>>8, g>>8, b>>8, c)
				}
			}

			page := render(t, pdf)
			if pb := page.Bounds(); abs(pb.Dx()-pageW) > 1 || abs(pb.Dy()-pageH) > 1 {
				t.Fatalf("page %v, want A4 %gx%g points", pb, pageW, pageH)
			}
			var all image.Rectangle
			for _, c := range tc.want {
				// The image is scaled to the text width (515 points), so
				// each stripe covers thousands of pixels.
				n, box := near(page, c, 12)
				if n < 15000/len(tc.want) {
					t.Errorf("%d pixels of %v on the page", n, c)
				}
				all = all.Union(box)
			}
			if all.Min.X < margin-1 || all.Min.Y < margin || all.Max.X > pageW-margin+1 || all.Max.Y > pageH-margin {
				t.Errorf("image drawn at %v, outside the margins", all)
			}
			if n := chromatic(page, 20); !tc.colourful && n > 0 {
				t.Errorf("%d coloured pixels on the page of a grey image", n)
			}
		})
	}
}

// TestWritePDFUnicodePatient: a patient ID outside Latin-1 prints as
// typed (the hand-written writer printed '?' for each such character):
// Latin, an en dash and Greek in DejaVu Sans, the Chinese character in
// the fallback font, both embedded.
func TestWritePDFUnicodePatient(t *testing.T) {
	const id = "Bello – Ωmega 猫"
	pdf := write(t, Report{PatientID: id, Date: date, Image: stripes(50, 50, color.Black), VHS: f(9), Result: "Result 1", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"})
	text := pageText(t, pdf)
	if !strings.Contains(text, "Patient ID: "+id+" Date:") {
		t.Fatalf("page text lacks the patient ID %q:\n%s", id, text)
	}
	if strings.ContainsAny(text, "?\uFFFD") {
		t.Fatalf("a character was replaced: %s", text)
	}
	fonts := string(poppler(t, pdf, "pdffonts"))
	for _, name := range []string{"DejaVuSans ", "DejaVuSans-Bold", "DroidSansFallback"} {
		line := ""
		for _, l := range strings.Split(fonts, "\n") {
			if strings.HasPrefix(l, name) {
				line = l
			}
		}
		// name, type, encoding, then emb sub uni.
		if f := strings.Fields(line); len(f) < 7 || f[len(f)-5] != "yes" || f[len(f)-3] != "yes" {
			t.Errorf("font %q not embedded with a Unicode map:\n%s", name, fonts)
		}
	}

	// Without characters DejaVu Sans lacks, the fallback font stays out.
	pdf = write(t, Report{PatientID: "Bjørn Ωmega", Date: date, Image: stripes(50, 50, color.Black), Result: "Result 1", ModelVersion: "m"})
	if fonts := string(poppler(t, pdf, "pdffonts")); strings.Contains(fonts, "Droid") {
		t.Errorf("fallback font embedded without need:\n%s", fonts)
	}
	if text := pageText(t, pdf); !strings.Contains(text, "Patient ID: Bjørn Ωmega Date:") {
		t.Errorf("page text: %s", text)
	}
}

// TestWritePDF: the report's content, as pdftotext reads it.
func TestWritePDF(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       Report
		want    []string
		notWant []string
	}{
		{
			name: "measured",
			r: Report{PatientID: "Rex (4821)", Date: date, Image: stripes(300, 200, color.Gray{128}), VHS: f(10.84), VLAS: f(2.13),
				Clinic:     Clinic{Name: "Happy Paws Veterinary Clinic", Address: "12 High Street\nSpringfield"},
				Animal:     []Field{{Label: "Name", Value: "Rex"}, {Label: "Species", Value: "dog, Boxer"}, {Label: "Owner", Value: "Jane Smith"}},
				Findings:   []string{"Heart size: normal (VHS 10.8; breed range 10.0-13.2)", "Left atrium: normal (VLAS 2.1; reference below 2.5)"},
				Legend:     []LegendItem{{Number: 1, Name: "Carina", Color: color.RGBA{R: 255, A: 255}}, {Number: 2, Name: "Cardiac apex", Color: color.RGBA{G: 255, A: 255}}},
				Confidence: "optimal", Result: "Model result: high confidence", Reading: "The heart size is within the breed range.",
				ModelVersion: "v3.0.0-synthetic-phantom.1", VHSRange: "breed range 10.0-13.2 (Boxer; Lamb et al. 2001)", VLASRange: "below 2.5", Kind: "Model measurement"},
			want: []string{"Happy Paws Veterinary Clinic 12 High Street Springfield", "Cardiac radiograph report: vertebral heart score",
				"Patient ID: Rex (4821) Date: " + date.Local().Format("2006-01-02 15:04") + " Model: v3.0.0-synthetic-phantom.1",
				"Name: Rex Species: dog, Boxer Owner: Jane Smith",
				"Heart size: normal (VHS 10.8; breed range 10.0-13.2) Left atrium: normal (VLAS 2.1; reference below 2.5)",
				"VHS reference: breed range 10.0-13.2 (Boxer; Lamb et al. 2001).", "Model confidence: optimal. Model result: high confidence",
				"Measurement: Model measurement.", "The heart size is within the breed range.", "1 Carina 2 Cardiac apex",
				"Veterinarian: Signature: Date:",
				"Decision support only: confirm the measurement on the original radiograph before acting on it.",
				"they have not been validated on patients."},
			notWant: []string{"clinician", "The model measured", "heart_top"},
		},
		{
			name: "edited, no VLAS",
			r: Report{PatientID: "Bjørn-犬", Date: date, Image: stripes(120, 400, color.Gray{128}), VHS: f(9.5), Clinician: true, ModelVHS: f(9.91),
				Kind: "Model landmarks corrected by clinician", Result: "Result 4", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"},
			want:    []string{"Patient ID: Bjørn-犬", "VLAS not measured", "Measurement: Model landmarks corrected by clinician. The model measured VHS 9.91, VLAS not measured."},
			notWant: []string{"confidence", "Vertebral span"},
		},
		{
			name: "placed by hand on a rejected image",
			r: Report{PatientID: "Rex", Date: date, Image: stripes(200, 200, color.Gray{128}), VHS: f(10.2), VLAS: f(2.1), Clinician: true,
				Kind: "Placed by hand by clinician", Result: "Result 6: Image rejected, not a valid radiograph", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5",
				Span: "Vertebral span checked against the image: about 5.1 vertebrae from A to B, not six; Vertebra A or B may be on the wrong vertebra."},
			want: []string{"Measurement: Placed by hand by clinician. The model gave no values for this image.", "VHS 10.20", "VLAS 2.10", "Result 6",
				"Vertebral span checked against the image: about 5.1 vertebrae from A to B, not six"},
			notWant: []string{"The model measured"},
		},
		{
			name:    "kind not stated",
			r:       Report{Date: date, Image: stripes(50, 50, color.Gray{128}), VHS: f(9), Result: "Result 1", ModelVersion: "m", VHSRange: "8.5-10.5", VLASRange: "< 2.5"},
			want:    []string{"Patient ID: not given"},
			notWant: []string{"Measurement:"},
		},
		{
			name: "long reading wraps inside the page",
			r: Report{PatientID: strings.Repeat("W", 128), Date: date, Image: stripes(50, 50, color.Gray{128}), Result: "Result 1", ModelVersion: "m",
				Reading: strings.Repeat("The cardiac silhouette is enlarged. ", 20)},
			want: []string{"Date: 2026", strings.TrimSpace(strings.Repeat("The cardiac silhouette is enlarged. ", 20))},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := pageText(t, write(t, tc.r))
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("page text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("page text has %q", w)
				}
			}
			// Every character of the patient ID is on the page (a long
			// one is broken over lines).
			if id := tc.r.PatientID; id != "" && !strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(id, " ", "")) {
				t.Errorf("patient ID %q not on the page:\n%s", id, text)
			}
		})
	}
}

// TestWritePDFTextInsidePage: text never runs past the right margin, even
// for a 128-character patient ID and a long reading (pdftotext -bbox gives
// each word's box).
// TestWritePDFLogo: the clinic's logo is embedded beside the radiograph.
func TestWritePDFLogo(t *testing.T) {
	pdf := write(t, Report{Date: date, Image: stripes(300, 200, color.Gray{128}), Clinic: Clinic{Name: "Happy Paws", Logo: stripes(64, 32, color.RGBA{R: 255, B: 255, A: 255})}})
	if _, imgs := embeddedImages(t, pdf); len(imgs) != 2 || imgs[0].Bounds().Dx() != 64 || imgs[1].Bounds().Dx() != 300 {
		t.Fatalf("%d embedded images", len(imgs))
	}
	if _, imgs := embeddedImages(t, write(t, Report{Date: date, Image: stripes(300, 200, color.Gray{128})})); len(imgs) != 1 {
		t.Fatalf("%d embedded images without a logo", len(imgs))
	}
}

func TestWritePDFTextInsidePage(t *testing.T) {
	long := strings.Repeat("Wolfeschlegelsteinhausen ", 6)
	pdf := write(t, Report{PatientID: strings.Repeat("猫W", 64), Date: date, Image: stripes(50, 50, color.Gray{128}), Result: "Result 1", ModelVersion: "m",
		Kind: "Model landmarks corrected by clinician", Clinician: true, ModelVHS: f(9.91),
		Reading: strings.Repeat("The cardiac silhouette is enlarged. ", 20),
		Clinic:  Clinic{Name: long, Address: long + "\n" + long, Logo: stripes(40, 20, color.Gray{200})},
		Animal:  []Field{{Label: "Name", Value: long}, {Label: "Owner", Value: long}, {Label: "Species", Value: "dog, " + long}},
		Legend:  []LegendItem{{Number: 1, Name: long}, {Number: 2, Name: "Cardiac apex"}}})
	out := string(poppler(t, pdf, "pdftotext", "-bbox"))
	words := regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">`).FindAllStringSubmatch(out, -1)
	if len(words) < 50 {
		t.Fatalf("%d words", len(words))
	}
	for _, w := range words {
		x0, _ := strconv.ParseFloat(w[1], 64)
		x1, _ := strconv.ParseFloat(w[3], 64)
		if x0 < margin-1 || x1 > pageW-margin+1 {
			t.Errorf("word at x %.1f-%.1f runs outside the margins: %s", x0, x1, w[0])
		}
	}
}

func TestWritePDFNoImage(t *testing.T) {
	if err := WritePDF(&bytes.Buffer{}, Report{}); err == nil {
		t.Fatal("a report without an image must fail")
	}
}
