package pop

// The learned pipeline's decision whether a frame is a photo of a screen
// (docs/pop.md, "PoP detection").

const (
	// MinGreyPresence is the p_screen from which a grey frame (Chroma
	// under MinChroma) is a screen photo: a camera's monochrome mode, or
	// a photo converted to grey before upload. Chosen on validation data
	// only (experiments/2026-11-28-grey-screen-photos.md): the smallest of
	// 0.5, 0.9 and 0.99 at which none of 1,680 validation radiograph files
	// and negatives was taken (0.9 took 2 negatives).
	MinGreyPresence = 0.99
	// MinGreyCornerConfidence is the corner confidence a grey frame needs
	// as well: the smallest of 0.65, 0.75 and 0.85 at which no validation
	// file is taken with p_screen MinGreyPresence (0.65 took a negative at
	// 0.74). A frame measured as a screen photo still needs a capture
	// session's 0.85 to keep its number (capture.FrameProblem).
	MinGreyCornerConfidence = 0.75
)

// ScreenPhoto reports whether the learned pipeline takes a frame for a
// photo of a screen. A colour photograph (chroma >= MinChroma) is one when
// p_screen reaches MinPresence. A grey frame, which is what radiograph
// files are, is one only on stronger evidence: p_screen at least
// MinGreyPresence and the screen's corners found with a confidence of at
// least MinGreyCornerConfidence. Either way a quad that is the file's own
// frame (fileFrame) is not a screen.
func ScreenPhoto(chroma, presence float64, c Corners, fileFrame bool) bool {
	switch {
	case fileFrame || presence < MinPresence:
		return false
	case chroma >= MinChroma:
		return true
	default:
		return presence >= MinGreyPresence && c.Found && c.Confidence >= MinGreyCornerConfidence
	}
}
