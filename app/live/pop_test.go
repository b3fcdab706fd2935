package live

import (
	"context"
	"errors"
	"testing"

	"vetlens/app"
)

// fakePoP answers corners for "screen", ErrNoCorners for "blank" and an
// internal error otherwise; sessions complete on their second frame.
type fakePoP struct {
	app.PoP // methods not used here panic
	frames  map[string]int
}

func (p *fakePoP) DetectCorners(ctx context.Context, img []byte) ([4][2]float64, int, int, error) {
	switch string(img) {
	case "screen":
		return [4][2]float64{{1, 2}, {9, 2}, {9, 8}, {1, 8}}, 10, 10, nil
	case "blank":
		return [4][2]float64{}, 10, 10, app.ErrNoCorners
	}
	return [4][2]float64{}, 0, 0, errors.New("decode frame: corrupt")
}

func (p *fakePoP) StartSession(ctx context.Context) (app.Session, error) {
	if err := ctx.Err(); err != nil {
		return app.Session{}, err
	}
	if p.frames == nil {
		p.frames = map[string]int{}
	}
	id := "s" + string(rune('0'+len(p.frames)))
	p.frames[id] = 0
	return app.Session{ID: id, Config: app.SessionConfig{MaxFrames: 20}}, nil
}

func (p *fakePoP) Frame(ctx context.Context, id string, b []byte) (app.FrameOutcome, error) {
	n, ok := p.frames[id]
	if !ok {
		return app.FrameOutcome{}, app.ErrSessionNotFound
	}
	if n >= 2 {
		return app.FrameOutcome{}, app.ErrSessionClosed
	}
	p.frames[id] = n + 1
	if n == 1 {
		return app.FrameOutcome{Status: app.StatusComplete, FramesProcessed: 2}, nil
	}
	return app.FrameOutcome{Status: app.StatusContinue, FramesProcessed: 1}, nil
}

func TestPoPOutliner(t *testing.T) {
	cases := []struct {
		img    string
		ok     bool
		errors bool
	}{
		{"screen", true, false},
		{"blank", false, false},
		{"junk", false, true},
	}
	o := PoPOutliner(&fakePoP{})
	for _, tc := range cases {
		t.Run(tc.img, func(t *testing.T) {
			c, ok, err := o.Corners(context.Background(), []byte(tc.img))
			if ok != tc.ok || (err != nil) != tc.errors {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if ok && c[2] != [2]float64{9, 8} {
				t.Fatalf("corners %v", c)
			}
		})
	}
}
