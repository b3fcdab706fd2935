package dogheart

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SpecOrder maps the six DogHeart points to the cardiac spec's class
// order (heart_top, heart_bottom, heart_right, heart_left, VLAS,
// Vertebra A, Vertebra B): six_points[i] is landmark SpecOrder[i].
var SpecOrder = [6]int{0, 1, 2, 3, 5, 6}

// VLASIndex is the VLAS landmark's index in the spec's class order; the
// DogHeart labels have no VLAS point, so it goes to the provenance.
const VLASIndex = 4

// ProvenanceFile is the sidecar beside Images/ and Labels/.
const ProvenanceFile = "provenance.json"

// Provenance says where one case came from.
type Provenance struct {
	// Case is the file stem (Images/Case.png, Labels/Case.mat).
	Case string `json:"case"`
	// Patient is the salted hash of the patient id (never the id).
	Patient string `json:"patient,omitempty"`
	// Kind is "edited", "manual", or "dogheart" for a plain imported case.
	Kind         string    `json:"kind"`
	ModelVersion string    `json:"model_version,omitempty"`
	Date         time.Time `json:"date,omitzero"`
	// VLASPoint is the VLAS landmark [x, y] in pixels.
	VLASPoint *[2]float64 `json:"vlas_point,omitempty"`
	// VHS and VLAS are the clinician's values.
	VHS  *float64 `json:"vhs,omitempty"`
	VLAS *float64 `json:"vlas,omitempty"`
	// ImageSHA256 is the hex SHA-256 of Images/Case.png.
	ImageSHA256 string `json:"image_sha256"`
}

// Sidecar is provenance.json.
type Sidecar struct {
	Format string       `json:"format"`
	Cases  []Provenance `json:"cases"`
}

// SidecarFormat names the sidecar's version.
const SidecarFormat = "vetlens-dogheart-1"

// WriteCase writes Images/stem.png (the bytes as given) and
// Labels/stem.mat (six_points) under dir.
func WriteCase(dir, stem string, png []byte, six [6][2]float64) error {
	for _, sub := range []string{"Images", "Labels"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("dogheart: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Images", stem+".png"), png, 0o644); err != nil {
		return fmt.Errorf("dogheart: write image: %w", err)
	}
	return WriteLabel(dir, stem, six)
}

// WriteLabel writes Labels/stem.mat holding six_points.
func WriteLabel(dir, stem string, six [6][2]float64) error {
	data := make([]float64, 0, 12)
	for _, p := range six {
		data = append(data, p[0], p[1])
	}
	var b bytes.Buffer
	if err := WriteMat(&b, Matrix{Name: "six_points", Rows: 6, Cols: 2, Data: data}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Labels", stem+".mat"), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("dogheart: write label: %w", err)
	}
	return nil
}

// Stems returns the stems of dir's labelled images (Images/S.png with
// Labels/S.mat), sorted.
func Stems(dir string) ([]string, error) {
	imgs, err := filepath.Glob(filepath.Join(dir, "Images", "*.png"))
	if err != nil {
		return nil, fmt.Errorf("dogheart: %w", err)
	}
	var out []string
	for _, ip := range imgs {
		stem := strings.TrimSuffix(filepath.Base(ip), ".png")
		if _, err := os.Stat(filepath.Join(dir, "Labels", stem+".mat")); err == nil {
			out = append(out, stem)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadSidecar reads dir's provenance.json; an empty sidecar when there
// is none (a plain DogHeart/CCK folder).
func ReadSidecar(dir string) (Sidecar, error) {
	b, err := os.ReadFile(filepath.Join(dir, ProvenanceFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Sidecar{Format: SidecarFormat}, nil
	}
	if err != nil {
		return Sidecar{}, fmt.Errorf("dogheart: %w", err)
	}
	var s Sidecar
	if err := json.Unmarshal(b, &s); err != nil {
		return Sidecar{}, fmt.Errorf("dogheart: %s: %w", ProvenanceFile, err)
	}
	return s, nil
}

// WriteSidecar writes dir's provenance.json.
func WriteSidecar(dir string, s Sidecar) error {
	s.Format = SidecarFormat
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("dogheart: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dogheart: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ProvenanceFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("dogheart: write %s: %w", ProvenanceFile, err)
	}
	return nil
}

// LoadOrCreateSalt returns the salt kept at path, creating a random
// 32-byte one (hex, mode 0600) when there is none.
func LoadOrCreateSalt(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		s, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(s) < 16 {
			return nil, fmt.Errorf("dogheart: salt %s is damaged", path)
		}
		return s, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("dogheart: read salt: %w", err)
	}
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("dogheart: salt: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dogheart: %w", err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(s)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("dogheart: write salt: %w", err)
	}
	return s, nil
}
