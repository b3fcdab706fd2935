package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// pickTree makes a folder with radiographs, other files, a subfolder and
// a hidden folder.
func pickTree(t *testing.T) (dir, long string) {
	t.Helper()
	dir = t.TempDir()
	long = "2026-03-14 Bella lateral thorax left recumbent after sedation, second exposure.png"
	for _, f := range []string{"a.png", "B.JPG", "notes.txt", long, filepath.Join("sub", "x.png"), filepath.Join(".hidden", "y.png")} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, long
}

func TestFilePicker(t *testing.T) {
	u, w, _ := newMenuTestUI(t, nil)
	dir, long := pickTree(t)
	u.setPref(PrefLastFolder, dir)
	var picked []string
	open := func() *filePicker {
		p := u.newFilePicker("Open a radiograph", pickOpen, radiographExts, "", func(p string) { picked = append(picked, p) })
		p.Show()
		return p
	}
	p := open()
	sep := string(filepath.Separator)
	if p.Dir() != dir || strings.Join(p.Names(), "|") != "sub"+sep+"|"+long+"|a.png|B.JPG" {
		t.Fatalf("listing of %s: %q", p.Dir(), p.Names())
	}
	// Large enough for a long name, in a 1000x700 window.
	if top := w.Canvas().Overlays().Top(); top == nil || top.Size().Width < 900 || top.Size().Height < 600 {
		t.Fatalf("dialog %v", top)
	}
	if need := fyne.MeasureText(long, 14, fyne.TextStyle{}).Width; p.list.Size().Width < need+40 {
		t.Fatalf("list %v wide, the long name needs %v", p.list.Size().Width, need)
	}
	// Typed paths: a folder is listed, an unknown file or another kind
	// of file is refused with a reason, a radiograph is picked.
	for _, c := range []struct{ typed, status, dir string }{
		{filepath.Join(dir, "sub"), "0 folders, 1 files", filepath.Join(dir, "sub")},
		{"..", "1 folders, 3 files", dir},
		{filepath.Join(dir, "nope.png"), "No such file", dir},
		{filepath.Join(dir, "notes.txt"), "not one of .jpg, .jpeg, .png", dir},
	} {
		p.SetPath(c.typed)
		p.Submit()
		if p.Dir() != c.dir || !strings.Contains(p.status.Text, c.status) || len(picked) != 0 {
			t.Fatalf("typed %q: dir %s, status %q, picked %q", c.typed, p.Dir(), p.status.Text, picked)
		}
	}
	p.SetPath(filepath.Join("sub", "x.png"))
	p.path.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if len(picked) != 1 || picked[0] != filepath.Join(dir, "sub", "x.png") || w.Canvas().Overlays().Top() != nil {
		t.Fatalf("picked %q, dialog still open: %v", picked, w.Canvas().Overlays().Top() != nil)
	}
	// The next dialog opens in the last folder; Escape closes it, from
	// the path field or from the window.
	p = open()
	if p.Dir() != filepath.Join(dir, "sub") {
		t.Fatalf("opened in %s, not the last folder", p.Dir())
	}
	p.path.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.Canvas().Overlays().Top() != nil {
		t.Fatal("Escape in the path field did not close the dialog")
	}
	p = open()
	w.Canvas().Unfocus()
	w.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.Canvas().Overlays().Top() != nil || len(picked) != 1 {
		t.Fatal("Escape on the window did not close the dialog")
	}
	// Saving: a typed name without extension gets .pdf.
	var saved string
	s := u.newFilePicker("Export", pickSave, []string{".pdf"}, "report-1.pdf", func(p string) { saved = p })
	s.Show()
	if s.path.Text != filepath.Join(dir, "sub", "report-1.pdf") {
		t.Fatalf("save name %q", s.path.Text)
	}
	s.SetPath("clinic copy")
	s.Submit()
	if saved != filepath.Join(dir, "sub", "clinic copy.pdf") {
		t.Fatalf("saved to %q", saved)
	}
	// A folder: the folder listed is chosen.
	var folder string
	f := u.newFilePicker("Folder", pickFolder, nil, "", func(p string) { folder = p })
	f.Show()
	f.SetPath(dir)
	f.Submit() // lists dir
	f.Submit() // chooses it
	if folder != dir {
		t.Fatalf("folder %q", folder)
	}
	// The Review tab's Open uses it.
	u.review.chooseFile()
	if u.lastPicker == f || u.lastPicker.Dir() != dir {
		t.Fatalf("Review's Open dialog: %+v", u.lastPicker)
	}
}
