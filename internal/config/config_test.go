package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSettingsDeclaredOnce: no flag or environment variable is declared
// twice, every setting has a name, a default and a meaning.
func TestSettingsDeclaredOnce(t *testing.T) {
	flags, envs := map[string]bool{}, map[string]bool{}
	for _, s := range All() {
		if s.Flag == "" && s.Env == "" || s.Default == "" || s.Help == "" {
			t.Errorf("incomplete setting %+v", s)
		}
		if s.Flag != "" {
			if flags[s.Flag] {
				t.Errorf("--%s declared twice", s.Flag)
			}
			flags[s.Flag] = true
			if len(s.Commands) == 0 {
				t.Errorf("--%s names no command", s.Flag)
			}
		}
		if s.Env != "" {
			if envs[s.Env] {
				t.Errorf("$%s declared twice", s.Env)
			}
			envs[s.Env] = true
		}
	}
}

func TestFromEnvAndORTCandidates(t *testing.T) {
	cases := []struct {
		name        string
		ort, compat string
		want        []string
	}{
		{"none", "", "", nil},
		{"VetLens's variable first", "/a/lib.so", "/b/lib.so", []string{"/a/lib.so", "/b/lib.so"}},
		{"onnxruntime_go's alone", "", "/b/lib.so", []string{"/b/lib.so"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ORTLib.Env, tc.ort)
			t.Setenv(ORTLibCompat.Env, tc.compat)
			want := append(tc.want, ortCandidates(exeDir())...)
			if got := ORTLibraryCandidates(); !slices.Equal(got, want) {
				t.Errorf("candidates %v, want %v", got, want)
			}
			if ORTLib.FromEnv() != tc.ort {
				t.Errorf("FromEnv %q, want %q", ORTLib.FromEnv(), tc.ort)
			}
		})
	}
	if (Setting{Flag: "x"}).FromEnv() != "" {
		t.Error("a setting without a variable read the environment")
	}
}

// TestRegisterAndPrint: a registered flag carries the table's help,
// default and variable; Print lists every setting on its own line.
func TestRegisterAndPrint(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	n := MaxInFlight.Int(fs, DefaultMaxInFlight)
	m := Models.String(fs, "")
	if err := fs.Parse([]string{"--max-in-flight", "7"}); err != nil {
		t.Fatal(err)
	}
	if *n != 7 || *m != "" {
		t.Fatalf("parsed %d %q", *n, *m)
	}
	if u := fs.Lookup("models").Usage; !strings.Contains(u, Models.Help) || !strings.Contains(u, "$VETLENS_MODELS") {
		t.Errorf("models usage %q", u)
	}
	if fs.Lookup("max-in-flight").DefValue != "32" {
		t.Errorf("max-in-flight default %s", fs.Lookup("max-in-flight").DefValue)
	}
	var out bytes.Buffer
	if err := Print(&out); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != len(All())+1 {
		t.Errorf("%d lines for %d settings:\n%s", lines, len(All()), out.String())
	}
}

func TestModelsDir(t *testing.T) {
	cases := []struct {
		name, env, flag, want string
	}{
		{"fallback", "", "", "models"},
		{"flag", "", "/opt/m", "/opt/m"},
		{"environment", "/env/models", "", "/env/models"},
		{"flag over environment", "/env/models", "/flag", "/flag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Models.Env, tc.env)
			if got := ModelsDir(tc.flag); got != tc.want {
				t.Errorf("ModelsDir(%q) with $%s=%q: %s, want %s", tc.flag, Models.Env, tc.env, got, tc.want)
			}
		})
	}
}

// TestInstallLayout: the executable-relative search finds the models and
// ONNX Runtime where the build tree, a bundle and the Debian package put
// them, in the documented order, and nothing when the folders are empty.
func TestInstallLayout(t *testing.T) {
	if got, want := ortCandidates("/usr/bin"), []string{
		"/usr/bin/lib/" + ORTLibraryFile, "/usr/bin/" + ORTLibraryFile,
		"/usr/lib/vetlens/" + ORTLibraryFile, SystemORTDir + "/" + ORTLibraryFile,
	}; !slices.Equal(got, want) {
		t.Errorf("ORT candidates for /usr/bin: %v, want %v", got, want)
	}
	if got := ortCandidates(""); !slices.Equal(got, []string{SystemORTDir + "/" + ORTLibraryFile}) {
		t.Errorf("ORT candidates without an executable: %v", got)
	}

	t.Setenv(Models.Env, "")
	root := t.TempDir()
	bin := filepath.Join(root, "usr", "bin")
	share := filepath.Join(root, "usr", "share", "vetlens", "models")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := modelsDirFor("", bin); got != "models" {
		t.Errorf("nothing installed: %s, want ./models", got)
	}
	// A models folder without a manifest does not count.
	if err := os.MkdirAll(share, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := modelsDirFor("", bin); got != "models" {
		t.Errorf("models folder without manifest.json: %s, want ./models", got)
	}
	if err := os.WriteFile(filepath.Join(share, "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := modelsDirFor("", bin); got != share {
		t.Errorf("the package layout: %s, want %s", got, share)
	}
	// models/ beside the executable comes first (the build tree).
	beside := filepath.Join(bin, "models")
	if err := os.MkdirAll(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(beside, "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := modelsDirFor("", bin); got != beside {
		t.Errorf("models beside the executable: %s, want %s", got, beside)
	}
	if got := modelsDirFor("/flag", bin); got != "/flag" {
		t.Errorf("the flag: %s", got)
	}
	t.Setenv(Models.Env, "/env")
	if got := modelsDirFor("", bin); got != "/env" {
		t.Errorf("the environment: %s", got)
	}
}
