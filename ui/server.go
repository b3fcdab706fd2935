package ui

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/internal/lanaddr"
)

// Listener scopes, the Server tab's choice of who may reach the API.
const (
	ScopeOff   = "Off"
	ScopeLocal = "This computer only"
	ScopeLAN   = "The clinic network"
)

// serverTab is the Server tab: the HTTPS API listener (off, this computer
// only, or the clinic network; the address it is bound to, the URLs LAN
// clients use, the certificate fingerprint and a copyable example
// request), the desktop's own usage, the API keys, and the settings.
type serverTab struct {
	u       *UI
	content fyne.CanvasObject

	scope       *widget.RadioGroup
	port        *widget.Entry
	listenState *widget.Label
	urls        *fyne.Container
	fingerprint *widget.Entry
	example     *widget.Entry
	copyExample *widget.Button
	desktop     *widget.Label
	dataDir     *widget.Entry
	saveDir     *widget.Button
	settings    *widget.Label
	dirInUse    *widget.Label // the data directory this run uses
	scroll      *container.Scroll
	pacs        *pacsSettings
	disk        *widget.Label // the free-space warning; hidden while the disk is fine
	keys        *keysTab

	// shownURLs are the URLs on screen (tests); interfaceIPs lists this
	// machine's addresses (tests replace it).
	shownURLs    []string
	interfaceIPs func() []net.IP

	updating bool // set while refresh sets the radio group
}

func newServerTab(u *UI) *serverTab {
	s := &serverTab{u: u, port: widget.NewEntry(), listenState: newValueLabel(""), urls: container.NewVBox(), fingerprint: widget.NewEntry(),
		example: widget.NewMultiLineEntry(), desktop: newValueLabel(""), dataDir: widget.NewEntry(), settings: newValueLabel(""), dirInUse: newValueLabel(dataDirText(u.opts.DataDir, u.pref(PrefDataDir, ""))),
		interfaceIPs: lanaddr.InterfaceIPs, disk: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	s.disk.Wrapping = fyne.TextWrapWord
	s.port.SetText(strconv.Itoa(lanaddr.DefaultPort))
	s.port.Validator = func(v string) error {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("a port from 1 to 65535, for example %d", lanaddr.DefaultPort)
		}
		return nil
	}
	s.scope = widget.NewRadioGroup([]string{ScopeOff, ScopeLocal, ScopeLAN}, s.choose)
	s.scope.Horizontal = true
	s.scope.Required = true
	s.fingerprint.Disable() // selectable, not editable
	s.example.Wrapping = fyne.TextWrapBreak
	s.example.SetMinRowsVisible(3)
	s.copyExample = widget.NewButton("Copy", func() {
		if a := fyne.CurrentApp(); a != nil {
			a.Clipboard().SetContent(s.example.Text)
		}
	})
	s.dataDir.SetText(u.pref(PrefDataDir, ""))
	s.dataDir.SetPlaceHolder("default: the user config dir's vetlens folder")
	s.saveDir = widget.NewButton("Save", func() {
		u.setPref(PrefDataDir, s.dataDir.Text)
		s.settings.SetText("Data directory saved; it is used from the next start.")
	})
	s.keys = newKeysTab(u)
	s.pacs = newPACSSettings(u)
	s.scroll = container.NewVScroll(container.NewVBox(
		s.disk,
		widget.NewLabelWithStyle("API listener (HTTPS)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, widget.NewLabel("Serve the API to"), nil, s.scope),
		container.NewBorder(nil, nil, widget.NewLabel("Port"), nil, container.NewGridWrap(fyne.NewSize(120, s.port.MinSize().Height), s.port)),
		s.listenState,
		s.urls,
		container.NewBorder(nil, nil, widget.NewLabel("Certificate SHA-256"), nil, s.fingerprint),
		widget.NewLabel("The certificate is self-signed: LAN clients pin this fingerprint or the public key pin in the example (docs/lan.md)."),
		container.NewBorder(nil, nil, widget.NewLabel("Example request"), s.copyExample, s.example),
		widget.NewSeparator(),
		widget.NewLabelWithStyle("This desktop's usage", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		s.desktop,
		widget.NewSeparator(),
		s.keys.content,
		widget.NewSeparator(),
		widget.NewLabelWithStyle("Settings", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		s.dirInUse,
		container.NewBorder(nil, nil, widget.NewLabel("Data directory"), s.saveDir, s.dataDir),
		s.settings,
		widget.NewSeparator(),
		s.pacs.content,
	))
	s.content = s.scroll
	s.refresh()
	return s
}

// dataDirText says which data directory this run uses (inUse, "" when
// the window was not told) and, where it differs, the saved setting a
// start without --data-dir uses.
func dataDirText(inUse, saved string) string {
	switch {
	case inUse == "":
		return ""
	case saved != "" && saved != inUse:
		return "Data directory in use: " + inUse + " (given for this run with --data-dir; without it the saved setting below, " + saved + ", is used)."
	}
	return "Data directory in use: " + inUse + "."
}

// choose starts, moves or stops the listener from the scope buttons.
func (s *serverTab) choose(scope string) {
	if s.updating || scope == "" {
		return
	}
	if err := s.u.SetListenScope(scope); err != nil {
		s.listenState.SetText(err.Error())
	}
}

// SetListenScope starts the HTTPS API listener for scope (ScopeLocal:
// 127.0.0.1, ScopeLAN: all interfaces, on the port field's port) or
// stops it (ScopeOff), then shows what the listener reports. The
// listener saves the choice for the next start.
func (u *UI) SetListenScope(scope string) error {
	defer u.server.refresh()
	l := u.opts.Listener
	if l == nil {
		return fmt.Errorf("the API listener is not available in this window")
	}
	if scope == ScopeOff {
		if err := l.Stop(); err != nil {
			return fmt.Errorf("stop listener: %w", err)
		}
		return nil
	}
	if err := u.server.port.Validate(); err != nil {
		return fmt.Errorf("listener port %q: %w", u.server.port.Text, err)
	}
	port, _ := strconv.Atoi(strings.TrimSpace(u.server.port.Text))
	addr := lanaddr.Local(port)
	if scope == ScopeLAN {
		addr = lanaddr.AllInterfaces(port)
	}
	if err := l.Start(addr); err != nil {
		return fmt.Errorf("start listener on %s: %w", addr, err)
	}
	return nil
}

// ListenerURLs are the URLs the Server tab shows for reaching the API
// (none while it is off).
func (u *UI) ListenerURLs() []string { return append([]string(nil), u.server.shownURLs...) }

// refresh shows the listener state, the desktop's statement and the keys.
func (s *serverTab) refresh() {
	s.updating = true
	defer func() { s.updating = false }()
	s.shownURLs = nil
	s.urls.Objects = nil
	if l := s.u.opts.Listener; l == nil {
		s.scope.Disable()
		s.listenState.SetText("The API listener is not available in this window.")
	} else {
		s.showListener(l.Status())
	}
	s.urls.Refresh()
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	if st, err := s.u.svc.Accounts.MonthlyStatement(ctx, app.DesktopCustomer); err == nil {
		s.desktop.SetText(fmt.Sprintf("%s: %d measurements and screenings counted (usage statistics; the desktop's own use is not charged).", st.Month, st.Usage))
	} else {
		s.desktop.SetText("No measurements from this desktop yet this month.")
	}
	s.keys.refresh()
	s.showDisk(s.u.svc.Status.Disk())
}

// showDisk shows a warning while the data directory's disk is low or
// full (app.DiskLow, app.DiskFull), and hides it otherwise.
func (s *serverTab) showDisk(d app.DiskState) {
	switch d.Level {
	case app.DiskFull:
		s.disk.SetText("Warning: " + d.Reason + ". Measurements, screenings and API calls that save are refused until space is freed.")
		s.disk.Show()
	case app.DiskLow:
		s.disk.SetText("Warning: " + d.Reason + ".")
		s.disk.Show()
	default:
		s.disk.SetText("")
		s.disk.Hide()
	}
}

// DiskWarning is the Server tab's free-space warning ("" when hidden).
func (u *UI) DiskWarning() string {
	if !u.server.disk.Visible() {
		return ""
	}
	return u.server.disk.Text
}

// showListener shows the listener's state: the scope, the bound address,
// the URLs clients use, the fingerprint and an example request.
func (s *serverTab) showListener(st ListenerStatus) {
	s.fingerprint.SetText(st.Fingerprint)
	s.example.SetText("")
	s.copyExample.Disable()
	switch {
	case !st.Running:
		s.scope.SetSelected(ScopeOff)
		if p, err := lanaddr.Port(st.Requested); err == nil && p > 0 {
			s.port.SetText(strconv.Itoa(p)) // where it would listen
		}
		if st.Err != nil {
			s.listenState.SetText("Not serving: " + st.Err.Error())
		} else {
			s.listenState.SetText("Not serving: no client, on this computer or another, can reach the API.")
		}
		return
	case lanaddr.LoopbackOnly(st.Addr):
		s.scope.SetSelected(ScopeLocal)
	default:
		s.scope.SetSelected(ScopeLAN)
	}
	if p, err := lanaddr.Port(st.Addr); err == nil && p > 0 {
		s.port.SetText(strconv.Itoa(p))
	}
	urls, err := lanaddr.URLs(st.Addr, s.interfaceIPs())
	switch {
	case err != nil:
		s.listenState.SetText(fmt.Sprintf("Serving on %s: %v", st.Addr, err))
	case lanaddr.LoopbackOnly(st.Addr):
		s.listenState.SetText(fmt.Sprintf("Serving this computer only (bound to %s). Other machines cannot reach it: choose %q to let them.", st.Addr, ScopeLAN))
	case len(urls) == 0:
		s.listenState.SetText(fmt.Sprintf("Serving the clinic network (bound to %s), but this computer has no network address yet: connect it to the network.", st.Addr))
	default:
		s.listenState.SetText(fmt.Sprintf("Serving the clinic network (bound to %s). Clients on other machines use one of:", st.Addr))
	}
	if st.LANClients > 0 {
		s.listenState.SetText(s.listenState.Text + fmt.Sprintf(" (%d connection(s) from other machines open now)", st.LANClients))
	}
	s.shownURLs = urls
	for _, u := range urls {
		e := widget.NewEntry()
		e.SetText(u)
		e.Disable() // selectable, not editable
		copyURL := widget.NewButton("Copy", func() {
			if a := fyne.CurrentApp(); a != nil {
				a.Clipboard().SetContent(u)
			}
		})
		s.urls.Add(container.NewBorder(nil, nil, nil, copyURL, e))
	}
	if len(urls) > 0 {
		s.example.SetText(exampleRequest(urls[0], st.PublicKeyPin))
		s.copyExample.Enable()
	}
}

// exampleRequest is a curl command that reaches the API at url, pinning
// the server's public key (pin; without one, the certificate is not
// checked at all, which the command says), with the key header.
func exampleRequest(url, pin string) string {
	check := "--insecure --pinnedpubkey '" + pin + "'"
	if pin == "" {
		check = "--insecure"
	}
	return fmt.Sprintf("curl %s -H 'x-api-key: YOUR_API_KEY' %s/v3/health", check, url)
}
