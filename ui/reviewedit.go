package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// placementStep is the instruction for placing landmark i by hand: its
// number in the click order, its name and where it belongs.
func placementStep(i int) string {
	where := [app.NumLandmarks]string{
		app.HeartTop:    "Carina (heart_top): where the trachea ends above the heart base; the top of the long axis.",
		app.HeartBottom: "Apex (heart_bottom): the tip of the heart, the far end of the long axis from the carina.",
		app.HeartRight:  "Cranial end of the short axis (heart_right): the cranial heart border on the widest short axis, perpendicular to the long axis.",
		app.HeartLeft:   "Caudal end of the short axis (heart_left): the caudal heart border on that same line, perpendicular to the long axis.",
		app.VLASPoint:   "VLAS: the caudal border of the left atrium where it meets the caudal vena cava.",
		app.VertebraA:   "Vertebra A: midpoint of T4's cranial endplate.",
		app.VertebraB:   "Vertebra B: midpoint of T9's caudal endplate (six vertebrae on from A).",
	}
	return fmt.Sprintf("%d/%d %s", i+1, app.NumLandmarks, where[i])
}

// editKeys is the short help on moving landmarks.
const editKeys = "Drag a landmark, or tap it and use the arrow keys (1 pixel; Shift or Ctrl: 10). Undo: Ctrl+Z."

// pushUndo keeps the current state as an undo step (before a change).
func (r *review) pushUndo() {
	r.history = append(r.history, reviewStep{state: r.view.State(), kind: r.kind, moved: r.moved, confirmed: r.confirmed})
}

// setState shows the panel's one current state (the values v in effect,
// doubt why there are none from the clinician's points) and who placed
// the points, and offers a confirmation per doubted point not yet
// settled.
func (r *review) setState(v app.Values, doubt *app.Doubt) {
	var text string
	switch {
	case !r.kind.Clinician():
		text = r.modelText
	case r.view.Placing():
		text = "Placing the landmarks by hand."
	case doubt != nil && !doubt.VLASOnly:
		text = "No verdict yet: the values wait for the doubted points."
	case v.VHS != nil:
		text = "Values from the clinician's points: VHS " + fmtValue(v.VHS) + ", VLAS " + fmtValue(v.VLAS) + "."
	default:
		text = "The clinician's points give no VHS."
	}
	if by := app.PointsBy(r.m, r.kind, r.clinicianLandmarks(), r.confirmed); by != "" {
		text = strings.TrimSpace(text + " " + by)
	}
	r.state.SetText(text)
	r.confirmBox.RemoveAll()
	if doubt == nil || r.view.Placing() || r.kind == app.MeasurementManual {
		return
	}
	for _, k := range doubt.Unsettled {
		k := k
		r.confirmBox.Add(widget.NewButton("Confirm "+app.LandmarkNames[k]+" where it is", func() { r.confirmPoint(k) }))
	}
}

// confirmPoint confirms landmark k of a withheld result where the model
// put it (one undo step): it counts as the clinician's, like a move.
func (r *review) confirmPoint(k int) {
	if r.m == nil || r.confirmed[k] {
		return
	}
	r.pushUndo()
	r.confirmed[k] = true
	if r.kind == app.MeasurementModel {
		r.kind = app.MeasurementEdited
	}
	r.moved = true
	r.update()
}

// landmarksChanged follows a placement, drag or nudge: moving the model's
// landmarks makes the measurement edited.
func (r *review) landmarksChanged() {
	if r.kind == app.MeasurementModel {
		r.kind = app.MeasurementEdited
	}
	r.moved = true
	r.update()
}

// startPlacement starts placing all 7 landmarks by hand (one undo step).
func (r *review) startPlacement() {
	if err := r.u.StartHandPlacement(); err != nil {
		r.status.SetText(err.Error())
	}
}

// StartHandPlacement clears the landmarks on the Review tab and starts
// placing all 7 by hand, in the guided order; the step's instruction is
// shown beside the image. A rejected image (result 6) must first be
// confirmed as a radiograph. Undo brings the previous landmarks back.
func (u *UI) StartHandPlacement() error {
	r := u.review
	if r.m == nil {
		return fmt.Errorf("place landmarks: nothing open on Review")
	}
	if r.m.Result.Rejected && !r.confirm.Checked {
		return fmt.Errorf("place landmarks: the model rejected this image; confirm it is a radiograph first")
	}
	r.pushUndo()
	r.kind = app.MeasurementManual
	r.view.StartPlacement()
	r.view.requestFocus()
	r.update()
	return nil
}

// undoStep undoes the last placement, move, nudge, start of hand
// placement or reset, and gives the landmark view the keyboard focus.
func (r *review) undoStep() {
	if len(r.history) == 0 {
		return
	}
	s := r.history[len(r.history)-1]
	r.history = r.history[:len(r.history)-1]
	r.view.Restore(s.state)
	r.kind, r.moved, r.confirmed = s.kind, s.moved, s.confirmed
	r.view.requestFocus() // the arrow keys keep working after the button
	r.update()
}

// resetToModel puts the model's landmarks back (for a measurement
// reopened from the history, the landmarks it was saved with; one undo
// step) and gives the landmark view the keyboard focus.
func (r *review) resetToModel() {
	if !r.m.HasModelLandmarks() || r.kind == r.baseKind && !r.moved {
		return
	}
	r.pushUndo()
	r.view.Restore(EditState{Landmarks: r.m.Result.Landmarks, Placed: app.NumLandmarks})
	r.kind, r.moved, r.confirmed = r.baseKind, false, app.Settled{}
	r.view.requestFocus()
	r.update()
}

// clinicianLandmarks are the landmarks in effect when they are the
// clinician's and complete; nil for the model's.
func (r *review) clinicianLandmarks() *app.Landmarks {
	if !r.kind.Clinician() || !r.view.Complete() {
		return nil
	}
	lm := r.view.Landmarks()
	return &lm
}

// setValues states the values as a clinician says them, against the
// patient's species or breed range, and names the range used.
func (r *review) setValues(vhs, vlas *float64) {
	ref := r.u.Reference()
	r.vhs.SetText(app.HeartSize(vhs, ref).Line)
	r.vlas.SetText(app.LeftAtrium(vlas, ref).Line)
	r.reading.SetText(app.Reading(vhs, vlas, ref))
	who := ref.VHS.Breed
	if who == "" {
		who = string(ref.VHS.Species)
	}
	text := fmt.Sprintf("Range used: %s %s for %s (%s).", ref.VHS.Scope(), ref.VHS.Describe(), who, ref.VHS.Source)
	if ref.Note != "" {
		text += " " + strings.ToUpper(ref.Note[:1]) + ref.Note[1:] + "."
	}
	if ref.VHS.Species == app.SpeciesCat {
		text += " The cardiac model was trained on canine radiographs: check the landmarks on a cat."
	}
	r.rangeText.SetText(text)
}
