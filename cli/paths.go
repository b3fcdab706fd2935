// Package cli implements VetLens's command-line subcommands. main.go
// dispatches to them; each takes its arguments and output streams and
// returns the process exit status.
package cli

import (
	"os"
	"path/filepath"

	"vetlens/engine/manifest"
	"vetlens/internal/config"
)

// ModelsDir resolves the models directory, first match wins: flagValue
// (--models), $VETLENS_MODELS, a models/ folder holding manifest.json beside
// the executable (symlinks resolved), and finally ./models.
func ModelsDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := config.Models.FromEnv(); v != "" {
		return v
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Join(filepath.Dir(exe), "models")
		if st, err := os.Stat(filepath.Join(dir, manifest.FileName)); err == nil && !st.IsDir() {
			return dir
		}
	}
	return "models"
}
