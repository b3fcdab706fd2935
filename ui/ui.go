// Package ui is the VetLens desktop interface (Fyne): Review (cardiac
// measurement of a radiograph with editable landmarks), Bloodwork (feline
// USG screening) and Server/Keys (API key administration). Screens call
// app.Service and the engines' pure functions (cardiac.Measure,
// usg.ParseRequest); they never touch the store or ONNX Runtime directly.
package ui

import (
	"context"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// predictTimeout bounds one prediction started from the UI.
const predictTimeout = 2 * time.Minute

// Options configures the UI.
type Options struct {
	// Window hosts dialogs (file open, errors); nil in tests, where the
	// dialogs are not shown and OpenFile is called directly.
	Window fyne.Window
	// ServerInfo is shown on the Server/Keys tab (for example the HTTPS
	// address when the API listener runs in-process); empty: none.
	ServerInfo string
}

// UI is the application's content: build it with New and put Content in
// a window.
type UI struct {
	svc  *app.Service
	opts Options
	tabs *container.AppTabs

	review *review
	blood  *bloodwork
	keys   *keysTab

	// workDone, when set (tests), is called after a background
	// prediction's result has been shown.
	workDone func()
}

// New builds the UI for svc without needing a real window.
func New(svc *app.Service, opts Options) *UI {
	u := &UI{svc: svc, opts: opts}
	u.review = newReview(u)
	u.blood = newBloodwork(u)
	u.keys = newKeysTab(u)
	u.tabs = container.NewAppTabs(
		container.NewTabItem("Review", u.review.content),
		container.NewTabItem("Bloodwork", u.blood.content),
		container.NewTabItem("Server/Keys", u.keys.content),
	)
	return u
}

// Content returns the root object to show in a window.
func (u *UI) Content() fyne.CanvasObject { return u.tabs }

// background runs work off the UI goroutine and then show (with work's
// results captured by the closure) on it via fyne.Do.
func (u *UI) background(work func(ctx context.Context), show func()) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), predictTimeout)
		work(ctx)
		cancel()
		fyne.Do(func() {
			show()
			if u.workDone != nil {
				u.workDone()
			}
		})
	}()
}

// newValueLabel is a label whose text wraps.
func newValueLabel(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}
