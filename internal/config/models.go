package config

import (
	"os"
	"path/filepath"

	"vetlens/engine/manifest"
)

// ModelsDir resolves the models directory, first match wins: flagValue
// (--models), $VETLENS_MODELS, a models/ folder holding manifest.json beside
// the executable (symlinks resolved), and finally ./models.
func ModelsDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := Models.FromEnv(); v != "" {
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
