package main

import (
	"bytes"
	"image/png"
	"io/fs"
	"os"
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
