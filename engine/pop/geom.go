package pop

import (
	"errors"
	"math"
	"sort"
)

// Point is a position in pixels, continuous coordinates: pixel (i, j)
// spans [i, i+1] x [j, j+1], so its centre is (i+0.5, j+0.5).
type Point struct{ X, Y float64 }

// Quad is four corners in the order TL, TR, BR, BL.
type Quad [4]Point

// Homography is a 3x3 projective transform, row-major, mapping
// (x, y, 1) to (u, v, w) and then (u/w, v/w).
type Homography [9]float64

// errSingular means four point pairs do not define a homography (three of
// them collinear).
var errSingular = errors.New("degenerate point set")

// HomographyFrom returns the homography that maps src[i] onto dst[i].
func HomographyFrom(src, dst Quad) (Homography, error) {
	var a [8][9]float64
	for i := range 4 {
		x, y, u, v := src[i].X, src[i].Y, dst[i].X, dst[i].Y
		a[2*i] = [9]float64{x, y, 1, 0, 0, 0, -u * x, -u * y, u}
		a[2*i+1] = [9]float64{0, 0, 0, x, y, 1, -v * x, -v * y, v}
	}
	// Gaussian elimination with partial pivoting.
	for c := range 8 {
		p := c
		for r := c + 1; r < 8; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return Homography{}, errSingular
		}
		a[c], a[p] = a[p], a[c]
		for r := range 8 {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k < 9; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	var h Homography
	for i := range 8 {
		h[i] = a[i][8] / a[i][i]
	}
	h[8] = 1
	return h, nil
}

// Apply maps a point.
func (h Homography) Apply(p Point) Point {
	w := h[6]*p.X + h[7]*p.Y + h[8]
	return Point{(h[0]*p.X + h[1]*p.Y + h[2]) / w, (h[3]*p.X + h[4]*p.Y + h[5]) / w}
}

// ApplyQuad maps four points.
func (h Homography) ApplyQuad(q Quad) Quad {
	var out Quad
	for i, p := range q {
		out[i] = h.Apply(p)
	}
	return out
}

// Rect returns the quad of a w x h rectangle with its corner at the origin.
func Rect(w, h float64) Quad { return Quad{{0, 0}, {w, 0}, {w, h}, {0, h}} }

func dist(a, b Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

// Area is the quad's area (shoelace formula), positive for either winding.
func (q Quad) Area() float64 {
	var s float64
	for i := range 4 {
		j := (i + 1) % 4
		s += q[i].X*q[j].Y - q[j].X*q[i].Y
	}
	return math.Abs(s) / 2
}

// Convex reports whether the quad is strictly convex.
func (q Quad) Convex() bool {
	sign := 0.0
	for i := range 4 {
		a, b, c := q[i], q[(i+1)%4], q[(i+2)%4]
		z := (b.X-a.X)*(c.Y-b.Y) - (b.Y-a.Y)*(c.X-b.X)
		if z == 0 || (sign != 0 && z*sign < 0) {
			return false
		}
		sign = z
	}
	return true
}

// minAngle is the quad's smallest interior angle in degrees.
func (q Quad) minAngle() float64 {
	m := 180.0
	for i := range 4 {
		a, b, c := q[(i+3)%4], q[i], q[(i+1)%4]
		v1x, v1y, v2x, v2y := a.X-b.X, a.Y-b.Y, c.X-b.X, c.Y-b.Y
		cos := (v1x*v2x + v1y*v2y) / (math.Hypot(v1x, v1y) * math.Hypot(v2x, v2y))
		m = min(m, math.Acos(max(-1, min(1, cos)))*180/math.Pi)
	}
	return m
}

// AxisDeviation is the largest angle, in degrees, between a side of q and
// the nearer of the image axes (rows, columns): 0 for a rectangle drawn
// on the pixel grid, the camera's roll and perspective for a photographed
// one.
func (q Quad) AxisDeviation() float64 {
	d := 0.0
	for i := range 4 {
		d = math.Max(d, q.sideAxisDeviation(i))
	}
	return d
}

// sideAxisDeviation is the angle, in degrees, between side i (from corner
// i to corner i+1) and the nearer image axis; 90 for a degenerate side.
func (q Quad) sideAxisDeviation(i int) float64 {
	a, b := q[i], q[(i+1)%4]
	dx, dy := math.Abs(b.X-a.X), math.Abs(b.Y-a.Y)
	if dx == 0 && dy == 0 {
		return 90
	}
	return math.Atan2(math.Min(dx, dy), math.Max(dx, dy)) * 180 / math.Pi
}

// Scale multiplies every coordinate by s.
func (q Quad) Scale(s float64) Quad {
	for i := range q {
		q[i].X *= s
		q[i].Y *= s
	}
	return q
}

// orderCorners puts four points in TL, TR, BR, BL order: sorted by angle
// around their centroid (clockwise in image coordinates), starting with the
// point whose x+y is smallest.
func orderCorners(p [4]Point) Quad {
	var cx, cy float64
	for _, v := range p {
		cx += v.X / 4
		cy += v.Y / 4
	}
	s := p[:]
	sort.Slice(s, func(i, j int) bool {
		return math.Atan2(s[i].Y-cy, s[i].X-cx) < math.Atan2(s[j].Y-cy, s[j].X-cx)
	})
	start := 0
	for i := range 4 {
		if s[i].X+s[i].Y < s[start].X+s[start].Y {
			start = i
		}
	}
	var q Quad
	for i := range 4 {
		q[i] = s[(start+i)%4]
	}
	return q
}

// defaultFocal is the focal length, in units of the photo's long side,
// assumed when it cannot be recovered from the quad (one pair of sides
// parallel in the photo): about a phone's main camera.
const defaultFocal = 1.0

// Aspect estimates the true width/height of the planar rectangle imaged as
// q in a w x h photo, with the principal point at the image centre and
// square pixels (Zhang and He, "Whiteboard scanning and image
// enhancement", 2007). The focal length is recovered from the two
// vanishing points; when it cannot be (a pair of sides is parallel in the
// photo, or the estimate is not a plausible camera) defaultFocal is used,
// which only matters as much as the perspective does. It returns the
// aspect and the focal length used, in pixels.
func Aspect(q Quad, w, h int) (aspect, focal float64) {
	u0, v0 := float64(w)/2, float64(h)/2
	// Zhang's m1..m4 are TL, TR, BL, BR.
	m := [4][3]float64{{q[0].X, q[0].Y, 1}, {q[1].X, q[1].Y, 1}, {q[3].X, q[3].Y, 1}, {q[2].X, q[2].Y, 1}}
	cross := func(a, b [3]float64) [3]float64 {
		return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
	}
	dot := func(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
	k2 := dot(cross(m[0], m[3]), m[2]) / dot(cross(m[1], m[3]), m[2])
	k3 := dot(cross(m[0], m[3]), m[1]) / dot(cross(m[2], m[3]), m[1])
	var n2, n3 [3]float64
	for i := range 3 {
		n2[i] = k2*m[1][i] - m[0][i]
		n3[i] = k3*m[2][i] - m[0][i]
	}
	long := float64(max(w, h))
	f := defaultFocal * long
	// n2[2] and n3[2] are 0 for sides parallel in the photo; relative to
	// the other components they must be clearly non-zero for a stable
	// estimate.
	if rel := math.Abs(n2[2]*n3[2]) * long * long / (math.Hypot(n2[0], n2[1]) * math.Hypot(n3[0], n3[1])); rel > 0.02 {
		f2 := -((n2[0]*n3[0] - (n2[0]*n3[2]+n2[2]*n3[0])*u0 + n2[2]*n3[2]*u0*u0) +
			(n2[1]*n3[1] - (n2[1]*n3[2]+n2[2]*n3[1])*v0 + n2[2]*n3[2]*v0*v0)) / (n2[2] * n3[2])
		// Phones and webcams: 0.5 to 3 times the long side.
		if f2 > 0 && math.Sqrt(f2) > 0.5*long && math.Sqrt(f2) < 3*long {
			f = math.Sqrt(f2)
		}
	}
	norm := func(n [3]float64) float64 {
		a := (n[0] - u0*n[2]) / f
		b := (n[1] - v0*n[2]) / f
		return a*a + b*b + n[2]*n[2]
	}
	r := math.Sqrt(norm(n2) / norm(n3))
	if !(r > 0.1 && r < 10) {
		r = (dist(q[0], q[1]) + dist(q[3], q[2])) / (dist(q[0], q[3]) + dist(q[1], q[2]))
	}
	return r, f
}

// Tilt is the angle in degrees between the rectangle's normal and the
// camera axis, given the focal length from Aspect; 0 when focal is 0.
func Tilt(q Quad, w, h int, focal float64) float64 {
	if focal <= 0 {
		return 0
	}
	asp, _ := Aspect(q, w, h)
	hm, err := HomographyFrom(Rect(asp, 1), q)
	if err != nil {
		return 0
	}
	u0, v0 := float64(w)/2, float64(h)/2
	col := func(c int) [3]float64 {
		x, y, z := hm[c], hm[3+c], hm[6+c]
		return [3]float64{(x - u0*z) / focal, (y - v0*z) / focal, z}
	}
	r1, r2 := col(0), col(1)
	n := [3]float64{r1[1]*r2[2] - r1[2]*r2[1], r1[2]*r2[0] - r1[0]*r2[2], r1[0]*r2[1] - r1[1]*r2[0]}
	l := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
	if l == 0 {
		return 0
	}
	return math.Acos(math.Min(1, math.Abs(n[2])/l)) * 180 / math.Pi
}

// line is a*x + b*y = c with a*a + b*b = 1.
type line struct{ a, b, c float64 }

// fitLine fits a line to points by total least squares.
func fitLine(pts []Point) (line, bool) {
	if len(pts) < 2 {
		return line{}, false
	}
	var mx, my float64
	for _, p := range pts {
		mx += p.X
		my += p.Y
	}
	n := float64(len(pts))
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for _, p := range pts {
		dx, dy := p.X-mx, p.Y-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	// Direction: principal eigenvector; normal is perpendicular.
	th := 0.5 * math.Atan2(2*sxy, sxx-syy)
	a, b := -math.Sin(th), math.Cos(th)
	return line{a, b, a*mx + b*my}, true
}

func (l line) dist(p Point) float64 { return math.Abs(l.a*p.X + l.b*p.Y - l.c) }

func intersect(l1, l2 line) (Point, bool) {
	d := l1.a*l2.b - l2.a*l1.b
	if math.Abs(d) < 1e-9 {
		return Point{}, false
	}
	return Point{(l1.c*l2.b - l2.c*l1.b) / d, (l1.a*l2.c - l2.a*l1.c) / d}, true
}
