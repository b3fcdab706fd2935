package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"vetlens/app"
	"vetlens/internal/config"
	"vetlens/internal/diskfree"
	"vetlens/platform/store"
)

type fakeDisk diskfree.Usage

func (d fakeDisk) Usage() (diskfree.Usage, error) { return diskfree.Usage(d), nil }

// TestServerTabDiskWarning: the Server tab warns while the data
// directory's disk is low or full and shows nothing otherwise.
func TestServerTabDiskWarning(t *testing.T) {
	tests := []struct {
		name string
		free uint64
		want string // a substring of the warning; "" for none
	}{
		{"plenty", 50 << 30, ""},
		{"low", config.DiskWarnBytes - 1, "disk low"},
		{"full", config.DiskRefuseBytes - 1, "refused until space is freed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			test.NewTempApp(t)
			st, err := store.Open(t.TempDir(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			svc, err := app.New(app.Deps{Repos: st.Repos(), Disk: fakeDisk{Free: tt.free, Total: 100 << 30}}, app.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			got := New(svc, Options{}).DiskWarning()
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("DiskWarning() = %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// TestServerTabSaysTheDataDirInUse: the Server tab names the data
// directory this run uses, and where --data-dir overrides the saved
// setting, both.
func TestServerTabSaysTheDataDirInUse(t *testing.T) {
	for _, tc := range []struct {
		name, saved, inUse string
		want               []string
	}{
		{"--data-dir over a saved setting", "/home/vet/saved", "/srv/vetlens-run", []string{"in use: /srv/vetlens-run", "--data-dir", "/home/vet/saved"}},
		{"the saved setting", "/home/vet/saved", "/home/vet/saved", []string{"in use: /home/vet/saved."}},
		{"the default", "", "/root/.config/vetlens", []string{"in use: /root/.config/vetlens."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newBareService(t)
			fyne.CurrentApp().Preferences().SetString(PrefDataDir, tc.saved)
			u := New(svc, Options{DataDir: tc.inUse})
			got := u.server.dirInUse.Text
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if tc.saved == tc.inUse && strings.Contains(got, "--data-dir") {
				t.Errorf("%q speaks of an override", got)
			}
		})
	}
}
