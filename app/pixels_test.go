package app

import (
	"context"
	"image"
	"sync"
	"testing"

	"vetlens/engine/cardiac"
)

// spyPipeline is a PoP pipeline and cardiac engine that records the
// pixel budget's bytes in use whenever it is called, to show that every
// use case holds its image's reservation while the pixels are used.
type spyPipeline struct {
	fakeCardiac
	svc *Service

	mu    sync.Mutex
	inUse []int64
	// plain, when set, is the pipeline's PlainFile rule; unset, no frame
	// is a radiograph file.
	plain func(frame []byte) bool
}

func (p *spyPipeline) seen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse = append(p.inUse, p.svc.Status.PixelStats().InUse)
}

func (p *spyPipeline) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	p.seen()
	return p.fakeCardiac.Predict(ctx, img, o)
}
func (p *spyPipeline) ModelsLoaded() int { return 0 }
func (p *spyPipeline) DetectCorners(ctx context.Context, img []byte) ([4][2]float64, int, int, error) {
	p.seen()
	return [4][2]float64{{1, 1}, {60, 1}, {60, 60}, {1, 60}}, 64, 64, nil
}
func (p *spyPipeline) PlainFile(ctx context.Context, frame []byte) (bool, error) {
	return p.plain != nil && p.plain(frame), nil
}
func (p *spyPipeline) Rectify(ctx context.Context, img []byte, c [4][2]float64) ([]byte, int, int, error) {
	p.seen()
	return []byte{0xff, 0xd8}, 60, 60, nil
}
func (p *spyPipeline) StartSession(ctx context.Context, owner SessionOwner, maxOpen int) (Session, error) {
	return Session{ID: "s1", Config: SessionConfig{MaxFrames: 20}}, nil
}
func (p *spyPipeline) OwnsSession(id, customer string) bool { return true }
func (p *spyPipeline) Frame(ctx context.Context, customer, id string, frame []byte) (FrameOutcome, error) {
	p.seen()
	return FrameOutcome{Status: StatusContinue, FramesProcessed: 1}, nil
}

// screenAware is the spy as a PoPMeasurer too.
type screenAware struct{ *spyPipeline }

func (p screenAware) Measure(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error) {
	p.seen()
	return syntheticResult(1), image.NewGray(image.Rect(0, 0, 64, 64)), nil
}

// TestPixelBudgetEveryUseCase: each use case that decodes an image
// reserves its cost from the service's pixel budget before the pixels
// are used and gives it back afterwards.
func TestPixelBudgetEveryUseCase(t *testing.T) {
	const px = 64 * 64 // codeImage: 64x64 grey
	img := codeImage(t, 1)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		screenAware bool
		run         func(*Service, Caller) error
		want        []int64 // bytes in use at each call into the pipeline
	}{
		{"predict", false, func(s *Service, c Caller) error {
			_, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{img}})
			return err
		}, []int64{px}},
		{"predict with render", false, func(s *Service, c Caller) error {
			_, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{img}, Render: true})
			return err
		}, []int64{px + renderBytesPerPixel*px}},
		{"batch and stream", false, func(s *Service, c Caller) error {
			_, err := s.Cardiac.PredictBatch(ctx, c, &CardiacRequest{Batch: true, Images: [][]byte{img, img}}, nil)
			return err
		}, []int64{px, px}},
		{"screen-aware predict", true, func(s *Service, c Caller) error {
			_, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{img}})
			return err
		}, []int64{popBytesPerPixel * px}},
		{"corners", false, func(s *Service, c Caller) error { _, err := s.Sessions.DetectCorners(ctx, img); return err },
			[]int64{popBytesPerPixel * px}},
		{"rectify", false, func(s *Service, c Caller) error {
			_, err := s.Sessions.Rectify(ctx, img, [4][2]float64{{1, 1}, {60, 1}, {60, 60}, {1, 60}})
			return err
		}, []int64{popBytesPerPixel * px}},
		{"preprocess", false, func(s *Service, c Caller) error { _, err := s.Sessions.Preprocess(ctx, img); return err },
			[]int64{popBytesPerPixel * px, popBytesPerPixel * px}},
		{"PoP frame", false, func(s *Service, c Caller) error {
			st, err := s.Sessions.StartSession(ctx, c)
			if err != nil {
				return err
			}
			_, err = s.Sessions.SessionFrame(ctx, c, st.SessionID, img, "")
			return err
		}, []int64{popBytesPerPixel * px}},
		{"desktop", false, func(s *Service, c Caller) error { _, err := s.Cardiac.MeasureDesktop(ctx, "rex", img); return err },
			[]int64{px}},
		{"desktop, screen-aware", true, func(s *Service, c Caller) error { _, err := s.Cardiac.MeasureDesktop(ctx, "rex", img); return err },
			[]int64{popBytesPerPixel * px}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			spy := &spyPipeline{svc: s}
			rewire(t, s, func(d *Deps, _ *Config) { d.Cardiac, d.PoP = spy, spy })
			if tc.screenAware {
				rewire(t, s, func(d *Deps, _ *Config) { d.PoPMeasurer = screenAware{spy} })
			}
			c := newCaller(t, s, "clinic", TierPaygo)
			if err := tc.run(s, c); err != nil {
				t.Fatal(err)
			}
			if len(spy.inUse) != len(tc.want) {
				t.Fatalf("pipeline called with %v bytes in use, want %v", spy.inUse, tc.want)
			}
			for i := range tc.want {
				if spy.inUse[i] != tc.want[i] {
					t.Fatalf("pipeline called with %v bytes in use, want %v", spy.inUse, tc.want)
				}
			}
			if st := s.Status.PixelStats(); st.InUse != 0 || st.Reservations == 0 {
				t.Fatalf("after the call: %+v", st)
			}
		})
	}
}
