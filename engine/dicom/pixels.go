package dicom

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"strings"

	dcm "github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/tag"

	"vetlens/internal/errs"
)

// render decodes the first frame's stored values and maps them to grey
// through the modality and VOI transforms. voi says which VOI was used.
func (p *parsed) render() (*image.Gray, string, error) {
	h := p.hdr
	var stored []uint16 // one stored value per pixel
	var err error
	if p.pixel.IsEncapsulated {
		stored, err = p.jpegFrame()
	} else {
		stored, err = p.nativeFrame()
	}
	if err != nil {
		return nil, "", err
	}
	lut, voi := p.greyLUT(stored)
	out := image.NewGray(image.Rect(0, 0, h.Width, h.Height))
	for i, v := range stored {
		out.Pix[i] = lut[v]
	}
	return out, voi, nil
}

// nativeFrame reads the first frame of uncompressed pixel data: each
// pixel's stored bits (Bits Stored below High Bit), colour reduced to
// luminance.
func (p *parsed) nativeFrame() ([]uint16, error) {
	h := p.hdr
	raw := p.pixel.UnprocessedValueData
	n := h.Width * h.Height
	var bo binary.ByteOrder = binary.LittleEndian
	if p.big {
		bo = binary.BigEndian
	}
	bytesPer := h.BitsAllocated / 8
	highBit := h.BitsStored - 1
	if hb, ok := intOf(&p.ds, tag.HighBit); ok && hb >= h.BitsStored-1 && hb < h.BitsAllocated {
		highBit = hb
	}
	shift := uint(highBit + 1 - h.BitsStored)
	mask := uint32(1)<<uint(h.BitsStored) - 1
	sample := func(i int) uint16 {
		var v uint32
		if bytesPer == 1 {
			v = uint32(raw[i])
		} else {
			v = uint32(bo.Uint16(raw[2*i:]))
		}
		return uint16(v >> shift & mask)
	}
	out := make([]uint16, n)
	if h.SamplesPerPixel == 1 {
		for i := range out {
			out[i] = sample(i)
		}
		return out, nil
	}
	planar, _ := intOf(&p.ds, tag.PlanarConfiguration)
	for i := range out {
		var c [3]uint16
		for k := range 3 {
			if planar == 1 {
				c[k] = sample(k*n + i)
			} else {
				c[k] = sample(3*i + k)
			}
		}
		if h.Photometric == "RGB" {
			out[i] = uint16((299*uint32(c[0]) + 587*uint32(c[1]) + 114*uint32(c[2]) + 500) / 1000)
		} else { // YBR: luminance is Y
			out[i] = c[0]
		}
	}
	return out, nil
}

// jpegFrame decodes the first frame of JPEG-encapsulated pixel data (its
// fragments joined when the file has one frame) to 8-bit stored values:
// grey as it is, colour as its luminance.
func (p *parsed) jpegFrame() ([]uint16, error) {
	h := p.hdr
	if h.TransferSyntaxUID != JPEGBaseline && h.TransferSyntaxUID != JPEGExtended {
		return nil, fmt.Errorf("%w: encapsulated pixel data in %s", ErrCorrupt, h.TransferSyntax)
	}
	data := p.pixel.Frames[0].EncapsulatedData.Data
	if h.Frames == 1 && len(p.pixel.Frames) > 1 {
		var joined []byte
		for _, f := range p.pixel.Frames {
			joined = append(joined, f.EncapsulatedData.Data...)
		}
		data = joined
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, p.jpegErr(err)
	}
	if cfg.Width != h.Width || cfg.Height != h.Height {
		return nil, fmt.Errorf("%w: JPEG frame is %dx%d, the header says %dx%d", ErrCorrupt, cfg.Width, cfg.Height, h.Width, h.Height)
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, p.jpegErr(err)
	}
	out := make([]uint16, h.Width*h.Height)
	switch m := img.(type) {
	case *image.Gray:
		for y := range h.Height {
			row := m.Pix[y*m.Stride : y*m.Stride+h.Width]
			for x, v := range row {
				out[y*h.Width+x] = uint16(v)
			}
		}
	case *image.YCbCr:
		for y := range h.Height {
			for x := range h.Width {
				out[y*h.Width+x] = uint16(m.Y[m.YOffset(x, y)])
			}
		}
	default:
		b := img.Bounds()
		for y := range h.Height {
			for x := range h.Width {
				r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				out[y*h.Width+x] = uint16((299*r + 587*g + 114*bl) / 1000 >> 8)
			}
		}
	}
	p.hdr.BitsStored = 8 // what the decoder gives, whatever the header said
	return out, nil
}

// jpegErr names the transfer syntax when the JPEG decoder cannot read a
// feature (12-bit precision, lossless), else reports a corrupt frame.
func (p *parsed) jpegErr(err error) error {
	if _, ok := err.(jpeg.UnsupportedError); ok {
		return unsupportedTS(p.hdr.TransferSyntaxUID, err.Error())
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the JPEG frame could not be decoded", err))
}

// greyLUT maps every possible stored value (0 .. 2^BitsStored-1) to grey:
// sign (Pixel Representation), then Rescale Slope and Intercept, then the
// VOI LUT, else the first window (VOI LUT Function LINEAR, LINEAR_EXACT
// or SIGMOID), else 8-bit values without a rescale as they are, else the
// frame's range; MONOCHROME1 inverted.
func (p *parsed) greyLUT(stored []uint16) ([]uint8, string) {
	h := p.hdr
	signed := false
	if pr, _ := intOf(&p.ds, tag.PixelRepresentation); pr == 1 && h.SamplesPerPixel == 1 {
		signed = true
	}
	slope, intercept := 1.0, 0.0
	if v, ok := numberOf(&p.ds, tag.RescaleSlope); ok && v != 0 {
		slope = v
	}
	if v, ok := numberOf(&p.ds, tag.RescaleIntercept); ok {
		intercept = v
	}
	size := 1 << uint(h.BitsStored)
	modality := func(s int) float64 {
		if signed && s >= size/2 {
			s -= size
		}
		return float64(s)*slope + intercept
	}
	voi, name := p.voiFunc(stored, modality)
	lut := make([]uint8, 1<<16)
	for s := range size {
		y := voi(modality(s))
		if h.Photometric == "MONOCHROME1" {
			y = 1 - y
		}
		lut[s] = uint8(math.Round(255 * min(1, max(0, y))))
	}
	return lut, name
}

// voiFunc returns the VOI transform to 0..1 and its name.
func (p *parsed) voiFunc(stored []uint16, modality func(int) float64) (func(float64) float64, string) {
	if f, ok := p.voiLUT(); ok {
		return f, "VOI LUT"
	}
	cs, wsz := numbersOf(&p.ds, tag.WindowCenter), numbersOf(&p.ds, tag.WindowWidth)
	if len(cs) > 0 && len(wsz) > 0 && wsz[0] > 0 && p.hdr.SamplesPerPixel == 1 {
		c, w := cs[0], wsz[0]
		name := fmt.Sprintf("window %g/%g", c, w)
		switch strings.TrimSpace(stringOf(&p.ds, tag.VOILUTFunction)) {
		case "SIGMOID":
			return func(x float64) float64 { return 1 / (1 + math.Exp(-4*(x-c)/w)) }, name + " sigmoid"
		case "LINEAR_EXACT":
			return func(x float64) float64 { return (x-c)/w + 0.5 }, name
		}
		if w < 1 {
			w = 1
		}
		return func(x float64) float64 {
			if w == 1 {
				if x < c-0.5 {
					return 0
				}
				return 1
			}
			return (x-(c-0.5))/(w-1) + 0.5
		}, name
	}
	if p.hdr.BitsStored == 8 && modality(0) == 0 && modality(255) == 255 {
		// 8-bit values without a rescale (secondary capture, JPEG):
		// shown as stored, as a JPEG would be.
		return func(x float64) float64 { return x / 255 }, "stored values"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	seen := make([]bool, 1<<16)
	for _, s := range stored {
		if !seen[s] {
			seen[s] = true
			m := modality(int(s))
			lo, hi = min(lo, m), max(hi, m)
		}
	}
	if hi <= lo {
		return func(float64) float64 { return 0.5 }, "full range"
	}
	return func(x float64) float64 { return (x - lo) / (hi - lo) }, "full range"
}

// voiLUT is the first VOI LUT Sequence item's table as a function of the
// modality value (clamped at both ends), scaled to 0..1.
func (p *parsed) voiLUT() (func(float64) float64, bool) {
	e, err := p.ds.FindElementByTag(tag.VOILUTSequence)
	if err != nil || e.Value.ValueType() != dcm.Sequences {
		return nil, false
	}
	items, _ := e.Value.GetValue().([]*dcm.SequenceItemValue)
	if len(items) == 0 {
		return nil, false
	}
	item := dcm.Dataset{Elements: items[0].GetValue().([]*dcm.Element)}
	desc := intsOf(&item, tag.LUTDescriptor)
	if len(desc) != 3 {
		return nil, false
	}
	n, first, bits := desc[0], desc[1], desc[2]
	if n == 0 {
		n = 1 << 16
	}
	if pr, _ := intOf(&p.ds, tag.PixelRepresentation); pr == 1 && first >= 1<<15 {
		first -= 1 << 16
	}
	var table []float64
	de, err := item.FindElementByTag(tag.LUTData)
	if err != nil {
		return nil, false
	}
	switch v := de.Value.GetValue().(type) {
	case []int:
		for _, x := range v {
			table = append(table, float64(x))
		}
	case []byte:
		// OW: the parser hands words back little endian whatever the
		// transfer syntax.
		for i := 0; i+1 < len(v); i += 2 {
			table = append(table, float64(binary.LittleEndian.Uint16(v[i:])))
		}
	}
	if len(table) < n || n < 2 || bits < 1 || bits > 16 {
		return nil, false
	}
	table = table[:n]
	top := float64(int(1)<<uint(bits) - 1)
	return func(x float64) float64 {
		i := int(math.Round(x)) - first
		i = min(n-1, max(0, i))
		return table[i] / top
	}, true
}
