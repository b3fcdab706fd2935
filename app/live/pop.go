package live

import (
	"context"
	"errors"
	"fmt"

	"vetlens/app"
)

// FileOutliner is an Outliner for frames read from image files: a frame
// that is a radiograph file, not a photograph of a screen (app.PoP's
// PlainFile, the rule `predict` and a session from files follow), has no
// screen outline; any other frame gets p's corners (PoPOutliner).
func FileOutliner(p app.PoP) Outliner { return fileOutliner{p} }

type fileOutliner struct{ p app.PoP }

func (o fileOutliner) Corners(ctx context.Context, jpeg []byte) ([4][2]float64, bool, error) {
	if plain, err := o.p.PlainFile(ctx, jpeg); err == nil && plain {
		return [4][2]float64{}, false, nil
	}
	return PoPOutliner(o.p).Corners(ctx, jpeg)
}

// PoPOutliner is an Outliner over a PoP pipeline's corner detection
// (app.PoP.DetectCorners; capture.Service in the application): no corners
// (app.ErrNoCorners) is ok false, not an error.
func PoPOutliner(p app.PoP) Outliner { return popOutliner{p} }

type popOutliner struct{ p app.PoP }

func (o popOutliner) Corners(ctx context.Context, jpeg []byte) ([4][2]float64, bool, error) {
	c, _, _, err := o.p.DetectCorners(ctx, jpeg)
	if errors.Is(err, app.ErrNoCorners) {
		return [4][2]float64{}, false, nil
	}
	if err != nil {
		return [4][2]float64{}, false, fmt.Errorf("outline: %w", err)
	}
	return c, true, nil
}
