package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"vetlens/assets"
)

func TestParseGUI(t *testing.T) {
	saved := t.TempDir() // a data dir where the Server tab left the clinic network on, off
	if err := saveListenSetting(saved, listenSetting{Serve: false, Addr: "0.0.0.0:9443"}); err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, listenSettingFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := test.NewTempApp(t).Preferences() // a setting kept by an older version
	legacy.SetString("listen_addr", "0.0.0.0:7443")
	legacy.SetString("listen_on_start", "true")
	for _, c := range []struct {
		name      string
		args      []string
		prefs     fyne.Preferences
		ok        bool
		code      int
		serve     bool
		addr, dir string
		importDir string
		open      string
	}{
		{name: "fresh data dir: this computer only", ok: true, serve: true, addr: "127.0.0.1:8443"},
		{name: "flags", args: []string{"--data-dir", "/tmp/vl", "--serve", "--addr", "0.0.0.0:9443"}, ok: true, serve: true, addr: "0.0.0.0:9443", dir: "/tmp/vl"},
		{name: "serve off by flag", args: []string{"--serve=false"}, ok: true, addr: "127.0.0.1:8443"},
		{name: "saved setting", args: []string{"--data-dir", saved}, ok: true, addr: "0.0.0.0:9443", dir: saved},
		{name: "flag over saved setting", args: []string{"--data-dir", saved, "--serve"}, ok: true, serve: true, addr: "0.0.0.0:9443", dir: saved},
		{name: "unreadable setting: default", args: []string{"--data-dir", broken}, ok: true, serve: true, addr: "127.0.0.1:8443", dir: broken},
		{name: "older version's setting", prefs: legacy, ok: true, serve: true, addr: "0.0.0.0:7443"},
		{name: "saved setting over the older one", args: []string{"--data-dir", saved}, prefs: legacy, ok: true, addr: "0.0.0.0:9443", dir: saved},
		{name: "bad address", args: []string{"--addr", "8443"}, code: ExitUsage},
		{name: "import folder and a file to open", args: []string{"--import-dir", "/srv/xray", "--open", "/srv/xray/IM1"}, ok: true, serve: true, addr: "127.0.0.1:8443", importDir: "/srv/xray", open: "/srv/xray/IM1"},
		{name: "help", args: []string{"-h"}, code: ExitOK},
		{name: "unknown flag", args: []string{"--nope"}, code: ExitUsage},
		{name: "stray argument", args: []string{"x.jpg"}, code: ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", "/cfg")
			t.Setenv("HOME", "/home/u")
			g, code, ok := parseGUI(c.args, io.Discard, c.prefs)
			if ok != c.ok || code != c.code {
				t.Fatalf("ok %v code %d, want %v %d", ok, code, c.ok, c.code)
			}
			if !ok {
				return
			}
			want := c.dir
			if want == "" {
				want = filepath.Join("/cfg", "vetlens")
			}
			if g.serve != c.serve || g.addr != c.addr || g.dataDir != want || g.models == "" || g.inFlight <= 0 || g.cardiacConc != 1 || g.importDir != c.importDir || g.open != c.open {
				t.Fatalf("config %+v", g)
			}
		})
	}
}

// iconApp records the icons set on the app and its windows (Fyne's test
// driver ignores them).
type iconApp struct {
	fyne.App
	icon    fyne.Resource
	windows []*iconWindow
}

type iconWindow struct {
	fyne.Window
	icon fyne.Resource
}

func (a *iconApp) SetIcon(r fyne.Resource) { a.icon = r }
func (a *iconApp) NewWindow(title string) fyne.Window {
	w := &iconWindow{Window: a.App.NewWindow(title)}
	a.windows = append(a.windows, w)
	return w
}
func (w *iconWindow) SetIcon(r fyne.Resource) { w.icon = r }

// TestMainWindowIcon: the desktop window and the app are given the
// bundled icon, assets/icon.png.
func TestMainWindowIcon(t *testing.T) {
	a := &iconApp{App: test.NewTempApp(t)}
	w := newMainWindow(a)
	defer w.Close()
	if len(a.windows) != 1 || w != a.windows[0] {
		t.Fatalf("%d windows", len(a.windows))
	}
	if a.windows[0].icon != assets.Icon() || a.icon != assets.Icon() {
		t.Fatalf("window icon %v, app icon %v, want the bundled %s", a.windows[0].icon, a.icon, assets.Icon().Name())
	}
	if !bytes.Equal(a.windows[0].icon.Content(), assets.IconPNG) || len(assets.IconPNG) == 0 {
		t.Fatal("the window's icon is not assets/icon.png")
	}
}
