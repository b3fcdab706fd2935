package ui

import (
	"strings"
	"testing"
	"time"

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
