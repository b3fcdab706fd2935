package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/repo"
)

// PrefLastPatient is the preference holding the last patient id, so the
// next start opens on the same patient.
const PrefLastPatient = "last_patient"

// patientBar is the patient record above the tabs: the id and the
// animal's details, editable and saved as a record (one save per change).
type patientBar struct {
	u       *UI
	content fyne.CanvasObject

	name, breed, birth, weight, owner *widget.Entry
	breedPick                         *widget.SelectEntry
	species, sex                      *widget.Select
	save                              *widget.Button
	status                            *widget.Label

	// saved is the record as stored (or as loaded): the form differs
	// from it when there is something to save.
	saved repo.Patient
	// loaded is set while the fields show a stored record.
	loaded bool
	// filling is set while the bar fills its own fields.
	filling bool
	// current is the patient id the bar last showed; carry is set while
	// the work on Review goes with a change of patient (switching to a
	// file's own patient), which then does not ask.
	current string
	carry   bool
}

func newPatientBar(u *UI) *patientBar {
	b := &patientBar{u: u, name: widget.NewEntry(), birth: widget.NewEntry(), weight: widget.NewEntry(), owner: widget.NewEntry(),
		status: newValueLabel("")}
	b.breedPick = widget.NewSelectEntry(app.StudiedBreeds(app.SpeciesUnknown))
	b.breed = &b.breedPick.Entry
	b.species = widget.NewSelect([]string{string(app.SpeciesDog), string(app.SpeciesCat)}, func(sp string) {
		// The breed suggestions are the species' own: a cat is not
		// offered dog breeds.
		b.breedPick.SetOptions(app.StudiedBreeds(app.ParseSpecies(sp)))
		b.changed()
	})
	b.species.PlaceHolder = "species"
	b.sex = widget.NewSelect(app.Sexes(), func(string) { b.changed() })
	b.sex.PlaceHolder = "sex"
	b.name.SetPlaceHolder("name")
	b.breedPick.SetPlaceHolder("breed")
	b.birth.SetPlaceHolder("YYYY-MM-DD")
	b.weight.SetPlaceHolder("kg")
	b.owner.SetPlaceHolder("owner")
	for _, e := range []*widget.Entry{b.name, b.birth, b.weight, b.owner} {
		e.OnChanged = func(string) { b.changed() }
	}
	b.breedPick.OnChanged = func(string) { b.changed() }
	b.save = widget.NewButton("Save patient", func() {
		if err := u.SavePatient(); err != nil {
			b.status.SetText(err.Error())
		}
	})
	b.save.Disable()
	bold := func(s string) *widget.Label {
		return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	field := func(label string, o fyne.CanvasObject) fyne.CanvasObject {
		return container.NewBorder(nil, nil, widget.NewLabel(label), nil, o)
	}
	row1 := container.NewGridWithColumns(4,
		container.NewBorder(nil, nil, bold("Patient ID"), nil, u.patient),
		field("Name", b.name), field("Species", b.species), field("Breed", b.breedPick))
	row2 := container.NewGridWithColumns(5, field("Sex", b.sex), field("Born", b.birth), field("Weight (kg)", b.weight), field("Owner", b.owner), b.save)
	b.content = container.NewVBox(row1, row2, b.status)
	return b
}

// form is the record as the fields show it: details, with its ID parsed
// from the patient field (u.patientID; SavePatient checks the rest,
// app.NormalizePatient).
func (b *patientBar) form() (repo.Patient, error) {
	p, err := b.details()
	if err != nil {
		return p, err
	}
	p.ID, err = b.u.patientID()
	return p, err
}

// details is the record as the fields show it, without its ID: a weight
// that is a number, the rest as typed.
func (b *patientBar) details() (repo.Patient, error) {
	p := repo.Patient{Name: b.name.Text, Species: b.species.Selected, Breed: b.breed.Text, Sex: b.sex.Selected,
		BirthDate: strings.TrimSpace(b.birth.Text), Owner: b.owner.Text}
	if w := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(b.weight.Text), "kg")); w != "" {
		v, err := strconv.ParseFloat(strings.ReplaceAll(w, ",", "."), 64)
		if err != nil {
			return p, fmt.Errorf("weight %q: a number of kilograms", b.weight.Text)
		}
		p.WeightKg = &v
	}
	return p, nil
}

// fill shows a record in the fields.
func (b *patientBar) fill(p repo.Patient) {
	b.filling = true
	defer func() { b.filling = false }()
	b.name.SetText(p.Name)
	b.species.SetSelected(p.Species)
	if p.Species == "" {
		b.species.ClearSelected()
	}
	b.breed.SetText(p.Breed)
	b.sex.SetSelected(p.Sex)
	if p.Sex == "" {
		b.sex.ClearSelected()
	}
	b.birth.SetText(p.BirthDate)
	b.weight.SetText(weightField(p.WeightKg))
	b.owner.SetText(p.Owner)
}

func weightField(w *float64) string {
	if w == nil {
		return ""
	}
	return strconv.FormatFloat(*w, 'f', -1, 64)
}

// dirty reports whether the fields differ from the stored record.
func (b *patientBar) dirty() bool {
	p, err := b.form()
	if err != nil {
		return true
	}
	s := b.saved
	return p.ID != "" && (!b.loaded || p.Name != s.Name || p.Species != s.Species || strings.TrimSpace(p.Breed) != s.Breed || p.Sex != s.Sex ||
		p.BirthDate != s.BirthDate || weightField(p.WeightKg) != weightField(s.WeightKg) || strings.TrimSpace(p.Owner) != s.Owner)
}

// changed follows an edit of a field: Save follows whether there is
// something to save, and the ranges on Review follow species and breed.
func (b *patientBar) changed() {
	if b.filling {
		return
	}
	enable(b.save, b.dirty())
	b.u.patientChanged()
}

// idChanged loads the record of the id typed, when there is one; the
// fields are kept as typed for a new id (so details typed first stay).
func (b *patientBar) idChanged(id string) {
	id = strings.TrimSpace(id)
	if prev := b.current; prev != id && !b.carry {
		// Leaving a patient with unsaved work on Review asks first: back
		// to that patient, or discard the work.
		b.u.confirmDiscard("change the patient to "+patientName(id), func() {}, func() {
			b.current = prev
			b.u.patient.SetText(prev) // the text as it was
		})
	}
	b.current = id
	var p repo.Patient
	found := false
	pid, perr := app.ParsePatientID(id)
	if id != "" && perr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
		var err error
		p, found, err = b.u.svc.Patients.PatientDetails(ctx, pid)
		cancel()
		if err != nil {
			b.status.SetText("Could not read the patient: " + err.Error())
		}
	}
	switch {
	case found:
		b.fill(p)
		b.saved, b.loaded = p, true
		b.status.SetText("")
	case b.loaded: // leaving a stored record: start empty
		b.fill(repo.Patient{})
		b.saved, b.loaded = repo.Patient{}, false
		b.status.SetText("")
	}
	if id != "" && !found {
		b.status.SetText("New patient: fill in the details and press Save patient.")
	}
	if id != "" && perr == nil {
		b.u.setPref(PrefLastPatient, id) // kept across restarts
	}
	if id == "" {
		b.status.SetText("")
	}
	enable(b.save, b.dirty())
	b.u.patientChanged()
	b.u.recordsChanged()
}

// SavePatient saves the patient bar's record (created or updated; nothing
// is written when it is unchanged) and keeps its id as the last patient.
func (u *UI) SavePatient() error {
	b := u.bar
	p, err := b.form()
	if err != nil {
		return fmt.Errorf("save patient: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	res, err := u.svc.Patients.SavePatient(ctx, p)
	if err != nil {
		return fmt.Errorf("save patient: %w", err)
	}
	b.fill(res.Patient)
	b.saved, b.loaded = res.Patient, true
	switch {
	case len(res.Changed) == 0:
		b.status.SetText("No change to save.")
	case res.Changed[0] == "created":
		b.status.SetText("Patient " + res.Patient.ID.String() + " saved.")
	default:
		b.status.SetText("Patient " + res.Patient.ID.String() + " updated: " + strings.Join(res.Changed, "; ") + ".")
	}
	u.setPref(PrefLastPatient, res.Patient.ID.String())
	enable(b.save, false)
	u.patientChanged()
	u.recordsChanged()
	return nil
}

// Patient is the patient bar's record as shown (the stored record with
// any unsaved edits; only the id when the details do not parse). Its ID
// is "" while the patient field holds no valid id.
func (u *UI) Patient() repo.Patient {
	id, _ := u.patientID()
	p, err := u.bar.details()
	if err != nil {
		return repo.Patient{ID: id}
	}
	p.ID = id
	return p
}

// Reference is the reference ranges for the patient bar's species and
// breed.
func (u *UI) Reference() app.Reference {
	p := u.Patient()
	return app.ReferenceFor(app.ParseSpecies(p.Species), p.Breed)
}

// PrefillPatient fills the patient bar from an image's patient tags
// (DICOM): the record of the tags' patient id is created or completed
// and saved (app.PrefillPatient), the bar shows it, and the status line
// says what was added and where the record and the image disagree (the
// record is kept there).
func (u *UI) PrefillPatient(tags app.PatientTags) (app.Prefill, error) {
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	res, err := u.svc.Patients.PrefillPatient(ctx, tags)
	if err != nil {
		return res, fmt.Errorf("patient from the image: %w", err)
	}
	u.SetPatientID(res.Patient.ID) // loads the stored record
	var notes []string
	switch {
	case res.Created:
		notes = append(notes, "Patient "+res.Patient.ID.String()+" created from the image's patient details.")
	case len(res.Changed) > 0:
		notes = append(notes, "Patient "+res.Patient.ID.String()+": added from the image: "+strings.Join(res.Changed, "; ")+".")
	default:
		notes = append(notes, "Patient "+res.Patient.ID.String()+" from the image.")
	}
	if len(res.Conflicts) > 0 {
		notes = append(notes, "The image differs from the record (record kept): "+strings.Join(res.Conflicts, "; ")+".")
	}
	if len(res.Ignored) > 0 {
		notes = append(notes, "Not taken from the image: "+strings.Join(res.Ignored, "; ")+".")
	}
	u.bar.status.SetText(strings.Join(notes, " "))
	return res, nil
}
