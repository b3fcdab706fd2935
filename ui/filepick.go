package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// PrefLastFolder is the preference holding the folder a file dialog last
// picked in; every file dialog opens there.
const PrefLastFolder = "last_folder"

// pickMode is what a file dialog picks.
type pickMode int

const (
	pickOpen   pickMode = iota // an existing file with an accepted extension
	pickSave                   // a file name to write (new or existing)
	pickFolder                 // a folder
)

// filePicker is VetLens's file dialog: a path field that takes a typed or
// pasted path (Enter: a folder is listed, a file is picked), the
// folder's subfolders and files with the accepted extensions in a list
// wide enough for long names, Up, and Escape to close. It opens in the
// folder last picked in (PrefLastFolder).
type filePicker struct {
	u      *UI
	mode   pickMode
	exts   []string // lower case, with the dot; empty: every file
	onPick func(path string)

	dir     string
	entries []pickEntry
	path    *pickPathEntry
	list    *widget.List
	status  *widget.Label
	ok      *widget.Button
	dlg     dialog.Dialog
	prevKey func(*fyne.KeyEvent)
	closed  bool
}

// pickEntry is one line of the list.
type pickEntry struct {
	name string
	dir  bool
}

// pickPathEntry is the path field; Escape closes the dialog.
type pickPathEntry struct {
	widget.Entry
	onEscape func()
}

// TypedKey implements fyne.Focusable: Escape closes the dialog.
func (e *pickPathEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.onEscape != nil {
		e.onEscape()
		return
	}
	e.Entry.TypedKey(k)
}

// newFilePicker builds a dialog (not shown) picking with mode among files
// with extensions exts (any case; "" accepts files without one), calling onPick with the path chosen.
func (u *UI) newFilePicker(title string, mode pickMode, exts []string, name string, onPick func(string)) *filePicker {
	p := &filePicker{u: u, mode: mode, onPick: onPick, status: newValueLabel("")}
	for _, e := range exts {
		p.exts = append(p.exts, strings.ToLower(e))
	}
	p.path = &pickPathEntry{onEscape: p.Close}
	p.path.ExtendBaseWidget(p.path)
	p.path.SetPlaceHolder("type or paste a path, then Enter")
	p.path.OnSubmitted = func(string) { p.Submit() }
	p.list = widget.NewList(func() int { return len(p.entries) },
		func() fyne.CanvasObject {
			return container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), nil, widget.NewLabel(""))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			e := p.entries[i]
			icon, label := c.Objects[1].(*widget.Icon), c.Objects[0].(*widget.Label)
			if e.dir {
				icon.SetResource(theme.FolderIcon())
				label.SetText(e.name + string(filepath.Separator))
			} else {
				icon.SetResource(theme.FileIcon())
				label.SetText(e.name)
			}
		})
	p.list.OnSelected = func(i widget.ListItemID) {
		e := p.entries[i]
		if e.dir {
			p.list.UnselectAll()
			p.Navigate(filepath.Join(p.dir, e.name))
			return
		}
		p.path.SetText(filepath.Join(p.dir, e.name))
	}
	up := widget.NewButtonWithIcon("Up", theme.MoveUpIcon(), func() { p.Navigate(filepath.Dir(p.dir)) })
	okText := map[pickMode]string{pickOpen: "Open", pickSave: "Save", pickFolder: "Choose folder"}[mode]
	p.ok = widget.NewButton(okText, p.Submit)
	p.ok.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", p.Close)
	accepts := "every file"
	if len(exts) > 0 {
		accepts = p.extList()
	}
	content := container.NewBorder(
		container.NewVBox(container.NewBorder(nil, nil, up, nil, p.path), widget.NewLabel("Showing folders and "+accepts+". Escape closes.")),
		container.NewVBox(p.status, container.NewHBox(layout.NewSpacer(), cancel, p.ok)),
		nil, nil, p.list)
	if w := u.opts.Window; w != nil {
		p.dlg = dialog.NewCustomWithoutButtons(title, content, w)
		p.dlg.SetOnClosed(p.restoreKeys)
	}
	start := u.pref(PrefLastFolder, "")
	if start == "" || !isDir(start) {
		start, _ = os.UserHomeDir()
	}
	if start == "" || !isDir(start) {
		start, _ = os.Getwd()
	}
	p.Navigate(start)
	if name != "" {
		p.path.SetText(filepath.Join(p.dir, name))
	}
	u.lastPicker = p
	return p
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Show shows the dialog, sized to the window (up to 1000x700) so names
// are not cut off, with the path field focused.
func (p *filePicker) Show() {
	w := p.u.opts.Window
	if p.dlg == nil || w == nil {
		return
	}
	sz := w.Canvas().Size()
	p.dlg.Resize(fyne.NewSize(max(min(1000, sz.Width-40), 500), max(min(700, sz.Height-40), 400)))
	p.prevKey = w.Canvas().OnTypedKey()
	w.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			p.Close()
			return
		}
		if p.prevKey != nil {
			p.prevKey(k)
		}
	})
	p.dlg.Show()
	w.Canvas().Focus(p.path)
}

// restoreKeys gives the window its own key handler back.
func (p *filePicker) restoreKeys() {
	if w := p.u.opts.Window; w != nil && !p.closed {
		w.Canvas().SetOnTypedKey(p.prevKey)
	}
	p.closed = true
}

// Close closes the dialog without picking.
func (p *filePicker) Close() {
	if p.dlg != nil {
		p.dlg.Hide()
	}
	p.restoreKeys()
}

// Dir is the folder listed.
func (p *filePicker) Dir() string { return p.dir }

// Names are the listed names, folders first (with a trailing separator).
func (p *filePicker) Names() []string {
	out := make([]string, len(p.entries))
	for i, e := range p.entries {
		out[i] = e.name
		if e.dir {
			out[i] += string(filepath.Separator)
		}
	}
	return out
}

// Navigate lists folder dir.
func (p *filePicker) Navigate(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		p.status.SetText("Cannot list the folder: " + err.Error())
		return
	}
	var dirs, files []pickEntry
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		full := filepath.Join(dir, name)
		switch {
		case isDir(full):
			dirs = append(dirs, pickEntry{name: name, dir: true})
		case p.mode != pickFolder && p.accepts(name):
			files = append(files, pickEntry{name: name})
		}
	}
	byName := func(a, b pickEntry) int { return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)) }
	slices.SortFunc(dirs, byName)
	slices.SortFunc(files, byName)
	p.dir = dir
	p.entries = append(dirs, files...)
	p.list.UnselectAll()
	p.list.Refresh()
	p.list.ScrollToTop()
	p.status.SetText(fmt.Sprintf("%d folders, %d files", len(dirs), len(files)))
	switch p.mode {
	case pickFolder:
		p.path.SetText(dir)
	default:
		p.path.SetText(dir + string(filepath.Separator))
	}
}

// extList names the accepted extensions ("" is files without one).
func (p *filePicker) extList() string {
	var names []string
	for _, e := range p.exts {
		if e == "" {
			e = "files without an extension"
		}
		names = append(names, e)
	}
	return strings.Join(names, ", ")
}

func (p *filePicker) accepts(name string) bool {
	return len(p.exts) == 0 || slices.Contains(p.exts, strings.ToLower(filepath.Ext(name)))
}

// SetPath types path into the path field (tests, drops).
func (p *filePicker) SetPath(path string) { p.path.SetText(path) }

// Submit acts on the path field: a folder is listed (in folder mode,
// picked); a file is picked when the mode and extension allow it, else
// the dialog says why. A picked path's folder is remembered.
func (p *filePicker) Submit() {
	path := strings.TrimSpace(p.path.Text)
	if path == "" {
		return
	}
	if strings.HasPrefix(path, "~"+string(filepath.Separator)) || path == "~" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, strings.TrimPrefix(path, "~"))
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	path = filepath.Clean(path)
	if p.mode == pickSave && filepath.Ext(path) == "" && len(p.exts) > 0 && !isDir(path) {
		path += p.exts[0]
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir() && p.mode == pickFolder && path == p.dir:
		p.pick(path, path)
	case err == nil && st.IsDir():
		p.Navigate(path)
	case p.mode == pickFolder:
		p.status.SetText("Not a folder: " + path)
	case p.mode == pickOpen && err != nil:
		p.status.SetText("No such file: " + path)
	case !p.accepts(path):
		p.status.SetText(fmt.Sprintf("%s is not one of %s.", filepath.Base(path), p.extList()))
	case p.mode == pickSave && !isDir(filepath.Dir(path)):
		p.status.SetText("No such folder: " + filepath.Dir(path))
	default:
		p.pick(path, filepath.Dir(path))
	}
}

func (p *filePicker) pick(path, folder string) {
	p.u.setPref(PrefLastFolder, folder)
	p.Close()
	if p.onPick != nil {
		p.onPick(path)
	}
}
