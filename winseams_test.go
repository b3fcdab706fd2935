package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// windowsGo runs the go command for windows/amd64 without cgo (as `make
// test-go` once did by hand), returning its output.
func windowsGo(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, args...)
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// TestWindowsSeams: the Windows variants of the platform seams in pure-Go
// packages (the Makefile's WINDOWS_PURE_PKGS; docs/packaging.md,
// "Windows") pass `go vet` for windows/amd64 without cgo, so they compile
// and vet on this Linux machine although nothing runs them here. The list
// is complete: every package with a _windows.go file is on it, or fails
// to vet for Windows without cgo (GoCV, ONNX Runtime, Fyne: the mingw-w64
// cross-build's), and every package on it has a _windows.go file.
func TestWindowsSeams(t *testing.T) {
	if testing.Short() {
		t.Skip("vets for windows/amd64 (-short)")
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^WINDOWS_PURE_PKGS := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no WINDOWS_PURE_PKGS")
	}
	pure := strings.Fields(string(m[1]))

	var seams []string // "./dir" of every package with a _windows.go file
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "models" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_windows.go") && !strings.HasSuffix(p, "_test.go") {
			if dir := "./" + filepath.ToSlash(filepath.Dir(p)); !slices.Contains(seams, dir) {
				seams = append(seams, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pure {
		if !slices.Contains(seams, p) {
			t.Errorf("WINDOWS_PURE_PKGS names %s, which has no _windows.go file", p)
		}
	}

	for _, dir := range seams {
		if !slices.Contains(pure, dir) {
			if _, err := windowsGo(t, "vet", dir); err == nil {
				t.Errorf("%s vets for Windows without cgo: add it to the Makefile's WINDOWS_PURE_PKGS", dir)
			}
		}
	}
	if out, err := windowsGo(t, append([]string{"vet"}, pure...)...); err != nil {
		t.Fatalf("GOOS=windows go vet %s: %v\n%s", strings.Join(pure, " "), err, out)
	}
}
