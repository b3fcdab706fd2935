// Package manifest reads models/manifest.json: which model files VetLens
// ships, their roles, input sizes, checksums and versions.
package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileName is the manifest's name inside the models directory.
const FileName = "manifest.json"

// Model describes one shipped model file.
type Model struct {
	File      string          `json:"file"`
	SHA256    string          `json:"sha256"`
	Role      string          `json:"role"`
	InputSize []int           `json:"input_size"`
	Inputs    []string        `json:"inputs"`
	Outputs   []string        `json:"outputs"`
	Version   string          `json:"version"`
	Params    json.RawMessage `json:"params,omitempty"`
}

// Family groups the models of one service and names the version reported
// in responses.
type Family struct {
	ModelVersion string          `json:"model_version"`
	Params       json.RawMessage `json:"params,omitempty"`
}

// Manifest is the parsed manifest plus the directory it was read from.
type Manifest struct {
	Dir      string            `json:"-"`
	Families map[string]Family `json:"families"`
	Models   []Model           `json:"models"`
}

// Load reads dir/manifest.json. It does not hash the model files; call Verify.
func Load(dir string) (*Manifest, error) {
	path := filepath.Join(dir, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse model manifest %s: %w", path, err)
	}
	m.Dir = dir
	return &m, nil
}

// ByRole returns the models with the given role, in manifest order.
func (m *Manifest) ByRole(role string) []Model {
	var out []Model
	for _, e := range m.Models {
		if e.Role == role {
			out = append(out, e)
		}
	}
	return out
}

// Path returns the absolute location of a model file.
func (m *Manifest) Path(e Model) string { return filepath.Join(m.Dir, e.File) }

// Family returns a family's entry or an error naming it.
func (m *Manifest) Family(name string) (Family, error) {
	f, ok := m.Families[name]
	if !ok {
		return Family{}, fmt.Errorf("model manifest has no %q family", name)
	}
	return f, nil
}

// Verify checks that a model file exists and matches its recorded SHA-256.
func (m *Manifest) Verify(e Model) error {
	f, err := os.Open(m.Path(e))
	if err != nil {
		return fmt.Errorf("model %s: %w", e.File, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hash model %s: %w", e.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != e.SHA256 {
		return fmt.Errorf("model %s: checksum %s does not match manifest %s", e.File, got, e.SHA256)
	}
	return nil
}
