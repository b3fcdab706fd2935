package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"vetlens/assets"
)

func TestParseGUI(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		ok        bool
		code      int
		serve     bool
		addr, dir string
		importDir string
	}{
		{name: "defaults", ok: true, addr: "0.0.0.0:8443"},
		{name: "data dir and serve", args: []string{"--data-dir", "/tmp/vl", "--serve", "--addr", "127.0.0.1:9443"}, ok: true, serve: true, addr: "127.0.0.1:9443", dir: "/tmp/vl"},
		{name: "import folder", args: []string{"--import-dir", "/srv/xray"}, ok: true, addr: "0.0.0.0:8443", importDir: "/srv/xray"},
		{name: "help", args: []string{"-h"}, code: ExitOK},
		{name: "unknown flag", args: []string{"--nope"}, code: ExitUsage},
		{name: "stray argument", args: []string{"x.jpg"}, code: ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", "/cfg")
			t.Setenv("HOME", "/home/u")
			g, code, ok := parseGUI(c.args, io.Discard, nil)
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
			if g.serve != c.serve || g.addr != c.addr || g.dataDir != want || g.models == "" || g.inFlight <= 0 || g.cardiacConc != 1 || g.importDir != c.importDir {
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
