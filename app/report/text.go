// The embedded fonts and setting text on a page with them.

package report

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/sfnt"
)

var (
	//go:embed fonts/DejaVuSans.ttf
	dejaVuSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	dejaVuSansBold []byte
	//go:embed fonts/DroidSansFallbackFull.ttf
	droidFallback []byte
)

// face is one embedded font: its gopdf family name, data, and the parsed
// font for coverage checks.
type face struct {
	family string
	data   []byte
	bold   bool

	once sync.Once
	font *sfnt.Font
	err  error
}

var (
	regular  = &face{family: "DejaVuSans", data: dejaVuSans}
	bold     = &face{family: "DejaVuSans-Bold", data: dejaVuSansBold, bold: true}
	fallback = &face{family: "DroidSansFallback", data: droidFallback}
)

func (f *face) parsed() (*sfnt.Font, error) {
	f.once.Do(func() { f.font, f.err = sfnt.Parse(f.data) })
	return f.font, f.err
}

// has reports whether the font has a glyph for r.
func (f *face) has(r rune) bool {
	fnt, err := f.parsed()
	if err != nil {
		return false
	}
	var b sfnt.Buffer
	g, err := fnt.GlyphIndex(&b, r)
	return err == nil && g != 0
}

// run is text set in one face.
type run struct {
	f    *face
	text string
}

// runs splits s into runs of the primary face and the fallback face (for
// the characters the primary lacks and the fallback has). Control
// characters become spaces; a character neither face has stays in the
// primary face, which draws U+FFFD for it.
func runs(primary *face, s string) []run {
	var out []run
	var cur strings.Builder
	var curFace *face
	for _, r := range s {
		if unicode.IsControl(r) {
			r = ' '
		}
		f := primary
		if !primary.has(r) && fallback.has(r) {
			f = fallback
		}
		if f != curFace && cur.Len() > 0 {
			out = append(out, run{curFace, cur.String()})
			cur.Reset()
		}
		curFace = f
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		out = append(out, run{curFace, cur.String()})
	}
	return out
}

// page draws text on a gopdf page, adding each face the first time it is
// used (so a report without CJK text does not parse the fallback font).
type page struct {
	pdf   *gopdf.GoPdf
	added map[*face]bool
	err   error
}

func (p *page) use(f *face, size float64) {
	if p.err != nil {
		return
	}
	if !p.added[f] {
		opt := gopdf.TtfOption{OnGlyphNotFoundSubstitute: func(rune) rune { return '\uFFFD' }}
		if f.bold {
			opt.Style = gopdf.Bold
		}
		if err := p.pdf.AddTTFFontDataWithOption(f.family, f.data, opt); err != nil {
			p.err = fmt.Errorf("report: font %s: %w", f.family, err)
			return
		}
		p.added[f] = true
	}
	style := ""
	if f.bold {
		style = "B"
	}
	if err := p.pdf.SetFont(f.family, style, size); err != nil {
		p.err = fmt.Errorf("report: font %s: %w", f.family, err)
	}
}

// width is the width of s in points.
func (p *page) width(primary *face, size float64, s string) float64 {
	var w float64
	for _, r := range runs(primary, s) {
		p.use(r.f, size)
		if p.err != nil {
			return 0
		}
		rw, err := p.pdf.MeasureTextWidth(r.text)
		if err != nil {
			p.err = fmt.Errorf("report: measure text: %w", err)
			return 0
		}
		w += rw
	}
	return w
}

// text draws s with its baseline at y (from the top of the page).
func (p *page) text(primary *face, size, x, y float64, s string) {
	for _, r := range runs(primary, s) {
		p.use(r.f, size)
		if p.err != nil {
			return
		}
		rw, err := p.pdf.MeasureTextWidth(r.text)
		if err != nil {
			p.err = fmt.Errorf("report: measure text: %w", err)
			return
		}
		p.pdf.SetXY(x, y)
		if err := p.pdf.Text(r.text); err != nil {
			p.err = fmt.Errorf("report: text: %w", err)
			return
		}
		x += rw
	}
}

// wrap breaks s into lines no wider than maxW at spaces (a word wider
// than a line is broken between characters).
func (p *page) wrap(primary *face, size, maxW float64, s string) []string {
	fits := func(t string) bool { return p.width(primary, size, t) <= maxW }
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	if fits(s) {
		return []string{s} // spacing kept as written
	}
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if fits(next) {
			cur = next
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
		}
		cur = ""
		for _, r := range w {
			if cur != "" && !fits(cur+string(r)) {
				lines = append(lines, cur)
				cur = ""
			}
			cur += string(r)
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
