package ui

import (
	"context"
	"fmt"
	"net"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// serverTab is the Server tab: the HTTPS API listener (on/off, address,
// certificate fingerprint), the desktop's own usage, the API keys, and
// the settings that persist (data directory, camera, listener address).
type serverTab struct {
	u       *UI
	content fyne.CanvasObject

	listenOn    *widget.Check
	addr        *widget.Entry
	listenState *widget.Label
	fingerprint *widget.Entry
	desktop     *widget.Label
	dataDir     *widget.Entry
	saveDir     *widget.Button
	settings    *widget.Label
	keys        *keysTab

	updating bool // set while refresh sets the check box
}

func newServerTab(u *UI) *serverTab {
	s := &serverTab{u: u, addr: widget.NewEntry(), listenState: newValueLabel(""), fingerprint: widget.NewEntry(),
		desktop: newValueLabel(""), dataDir: widget.NewEntry(), settings: newValueLabel("")}
	s.addr.SetText(u.pref(PrefListenAddr, DefaultListenAddr))
	s.addr.Validator = func(v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("HOST:PORT, for example 0.0.0.0:8443")
		}
		return nil
	}
	s.listenOn = widget.NewCheck("Serve the API to the clinic network (HTTPS)", s.toggle)
	s.fingerprint.Disable() // selectable, not editable
	s.dataDir.SetText(u.pref(PrefDataDir, ""))
	s.dataDir.SetPlaceHolder("default: the user config dir's vetlens folder")
	s.saveDir = widget.NewButton("Save", func() {
		u.setPref(PrefDataDir, s.dataDir.Text)
		s.settings.SetText("Data directory saved; it is used from the next start.")
	})
	s.keys = newKeysTab(u)
	s.content = container.NewVScroll(container.NewVBox(
		widget.NewLabelWithStyle("API listener", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, widget.NewLabel("Address"), nil, s.addr),
		s.listenOn, s.listenState,
		container.NewBorder(nil, nil, widget.NewLabel("Certificate SHA-256"), nil, s.fingerprint),
		widget.NewLabel("LAN clients pin this fingerprint (the certificate is self-signed)."),
		widget.NewSeparator(),
		widget.NewLabelWithStyle("This desktop's usage", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		s.desktop,
		widget.NewSeparator(),
		s.keys.content,
		widget.NewSeparator(),
		widget.NewLabelWithStyle("Settings", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, widget.NewLabel("Data directory"), s.saveDir, s.dataDir),
		s.settings,
	))
	s.refresh()
	return s
}

// toggle starts or stops the listener from the check box.
func (s *serverTab) toggle(on bool) {
	if s.updating {
		return
	}
	err := s.u.SetListening(on)
	s.refresh()
	if err != nil {
		s.listenState.SetText(err.Error())
	}
}

// SetListening starts (on the address field's address, saved as the
// setting) or stops the HTTPS API listener.
func (u *UI) SetListening(on bool) error {
	l := u.opts.Listener
	if l == nil {
		return fmt.Errorf("the API listener is not available in this window")
	}
	if !on {
		if err := l.Stop(); err != nil {
			return fmt.Errorf("stop listener: %w", err)
		}
		u.setPref(PrefListenOnStart, "false")
		return nil
	}
	addr := u.server.addr.Text
	if err := u.server.addr.Validate(); err != nil {
		return fmt.Errorf("listener address %q: %w", addr, err)
	}
	if err := l.Start(addr); err != nil {
		return fmt.Errorf("start listener on %s: %w", addr, err)
	}
	u.setPref(PrefListenAddr, addr)
	u.setPref(PrefListenOnStart, "true")
	return nil
}

// refresh shows the listener state, the desktop's statement and the keys.
func (s *serverTab) refresh() {
	s.updating = true
	defer func() { s.updating = false }()
	if l := s.u.opts.Listener; l == nil {
		s.listenOn.Disable()
		s.listenState.SetText("The API listener is not available in this window.")
	} else {
		st := l.Status()
		s.listenOn.SetChecked(st.Running)
		switch {
		case st.Running:
			s.listenState.SetText("Serving https://" + st.Addr)
		case st.Err != nil:
			s.listenState.SetText("Stopped: " + st.Err.Error())
		default:
			s.listenState.SetText("Not serving.")
		}
		s.fingerprint.SetText(st.Fingerprint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	if st, err := s.u.svc.MonthlyStatement(ctx, app.DesktopCustomer); err == nil {
		s.desktop.SetText(statementText(st))
	} else {
		s.desktop.SetText("No measurements from this desktop yet this month.")
	}
	s.keys.refresh()
}
