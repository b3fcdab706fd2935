package main

import (
	"bytes"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"vetlens/assets"
)

// TestFyneAppMetadata: FyneApp.toml carries the app ID, name, version and
// icon; the icon it names exists, is a square 512-pixel PNG and is the one
// bundled into the binary; the metadata set at start is the file's (the
// embedded copy is the file on disk); and no Go code names an app ID of
// its own (NewWithID or the ID as a literal), so FyneApp.toml is the one
// place it is written. docs/gui.md names the same ID for the preferences
// folder.
func TestFyneAppMetadata(t *testing.T) {
	onDisk, err := os.ReadFile("FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, fyneAppTOML) {
		t.Fatal("the embedded FyneApp.toml is not the file on disk")
	}
	f, err := assets.ParseFyneApp(onDisk)
	if err != nil {
		t.Fatal(err)
	}
	d := f.Details
	if !regexp.MustCompile(`^[a-z][a-z0-9]*(\.[a-z][a-z0-9]*){2,}$`).MatchString(d.ID) {
		t.Errorf("app ID %q is not reverse-DNS", d.ID)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(d.Version) || d.Name != "VetLens" || d.Build < 1 {
		t.Errorf("details %+v", d)
	}
	if appMetadata.ID != d.ID || appMetadata.Name != d.Name || appMetadata.Version != d.Version || appMetadata.Icon != assets.Icon() {
		t.Errorf("metadata at start %+v, FyneApp.toml %+v", appMetadata, d)
	}

	icon, err := os.ReadFile(filepath.FromSlash(d.Icon))
	if err != nil {
		t.Fatalf("icon named in FyneApp.toml: %v", err)
	}
	if !bytes.Equal(icon, assets.IconPNG) {
		t.Errorf("%s is not the bundled icon", d.Icon)
	}
	img, err := png.Decode(bytes.NewReader(icon))
	if err != nil {
		t.Fatalf("icon: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 512 {
		t.Errorf("icon is %v, want 512x512", b)
	}
	// Transparent corners (a rounded square), an opaque clinic-blue
	// middle edge and a white heart in the middle.
	if _, _, _, a := img.At(2, 2).RGBA(); a != 0 {
		t.Errorf("icon corner alpha %d, want transparent", a)
	}
	if r, g, b, a := img.At(40, 256).RGBA(); a>>8 != 255 || b>>8 < 150 || r>>8 > 80 || g>>8 > 150 {
		t.Errorf("icon edge %d,%d,%d,%d, want opaque blue", r>>8, g>>8, b>>8, a>>8)
	}

	lit := regexp.MustCompile(regexp.QuoteMeta(`"` + d.ID + `"`))
	err = filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (path == "models" || strings.HasPrefix(e.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || path == "packaging_test.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(src, []byte("NewWithID(")) || lit.Match(src) {
			t.Errorf("%s names an app ID; it belongs in FyneApp.toml", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := os.ReadFile(filepath.Join("docs", "gui.md")); err != nil || !bytes.Contains(doc, []byte("`"+d.ID+"`")) {
		t.Errorf("docs/gui.md does not name the app ID %s: %v", d.ID, err)
	}
}

// TestWindowsTestOrSkip: make test's Windows part
// (packaging/windows/test-or-skip.sh) tells its two failures apart. When
// the prerequisites cannot be installed it prints a SKIP line and passes,
// so make test still counts the rest; when the tests fail (a JSON
// mismatch, a crash) make test fails; WINDOWS_TESTS=require makes a
// missing prerequisite a failure, WINDOWS_TESTS=off skips without trying.
func TestWindowsTestOrSkip(t *testing.T) {
	for _, c := range []struct {
		mode, prereqs, tests string
		ok                   bool
		says                 string
	}{
		{"", "true", "true", true, "PASS test-windows"},
		{"", "echo apt-get: unreachable; exit 100", "touch ran", true, "SKIP test-windows"},
		{"", "true", "echo mismatch; exit 1", false, "FAIL test-windows"},
		{"auto", "true", "kill -SEGV $$", false, "FAIL test-windows"},
		{"require", "exit 100", "touch ran", false, "FAIL test-windows: no prerequisites"},
		{"off", "touch ran", "touch ran", true, "SKIP test-windows: WINDOWS_TESTS=off"},
		{"maybe", "true", "true", false, "want auto, require or off"},
	} {
		dir := t.TempDir()
		cd := "cd " + dir + " && "
		cmd := exec.Command("packaging/windows/test-or-skip.sh", cd+c.prereqs, cd+c.tests)
		cmd.Env = append(os.Environ(), "WINDOWS_TESTS="+c.mode)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok || !strings.Contains(string(out), c.says) {
			t.Errorf("WINDOWS_TESTS=%q prereqs %q tests %q: err %v, want ok %v and %q; output:\n%s",
				c.mode, c.prereqs, c.tests, err, c.ok, c.says, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Errorf("WINDOWS_TESTS=%q prereqs %q: the tests ran", c.mode, c.prereqs)
		}
	}
}
