package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vetlens/app/dogheart"
	"vetlens/app/repo"
	"vetlens/platform/store"
)

// testPNG is a w x h gray image whose pixels depend on seed.
func testPNG(t *testing.T, w, h int, seed uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{Y: uint8(x*3+y*5) + seed})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testLandmarks are 7 distinct landmarks (with fractions) shifted by off.
func testLandmarks(off float64) [][2]float64 {
	lm := make([][2]float64, 7)
	for i := range lm {
		lm[i] = [2]float64{10.25 + float64(i)*7 + off, 20.5 + float64(i)*3 + off/2}
	}
	return lm
}

// seedHistory fills a bbolt data directory with model, edited (a chain of
// two corrections), manual and hidden manual entries and returns the
// entries that an export must hold, by Seq.
func seedHistory(t *testing.T, dir string) map[uint64]repo.HistoryEntry {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := st.Repos().History
	v := 10.2
	add := func(customer, id string, e repo.HistoryEntry, seed uint8) repo.HistoryEntry {
		e.Time, e.VHS, e.VLAS, e.ModelVersion, e.Source = time.Date(2026, 3, 1, 9, 0, int(seed), 0, time.UTC), &v, &v, "v3.2.0", "desktop"
		e.HasImage = true
		out, err := h.Add(ctx, customer, id, e, testPNG(t, 40+int(seed), 30, seed))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := map[uint64]repo.HistoryEntry{}
	m := add("clinic-a", "PAT-SECRET-4711", repo.HistoryEntry{Kind: "model", Landmarks: testLandmarks(0)}, 1)
	e1 := add("clinic-a", "PAT-SECRET-4711", repo.HistoryEntry{Kind: "edited", Edited: true, Supersedes: m.Seq, Landmarks: testLandmarks(1)}, 2)
	e2 := add("clinic-a", "PAT-SECRET-4711", repo.HistoryEntry{Kind: "edited", Edited: true, Supersedes: e1.Seq, Landmarks: testLandmarks(2)}, 3)
	want[e2.Seq] = e2
	man := add("clinic-b", "OWNER-ZED-99", repo.HistoryEntry{Kind: "manual", Edited: true, Landmarks: testLandmarks(3)}, 4)
	want[man.Seq] = man
	hid := add("clinic-b", "OWNER-ZED-99", repo.HistoryEntry{Kind: "manual", Edited: true, Landmarks: testLandmarks(4)}, 5)
	if _, err := h.Hide(ctx, "clinic-b", "OWNER-ZED-99", hid.Seq, repo.Hidden{Time: time.Now(), Reason: "wrong patient"},
		repo.AuditEvent{Time: time.Now(), PatientID: "OWNER-ZED-99", Action: "hidden", Customer: "clinic-b", Entry: hid.Seq, Reason: "wrong patient"}); err != nil {
		t.Fatal(err)
	}
	add("clinic-b", "MODEL-ONLY-5", repo.HistoryEntry{Kind: "model", Landmarks: testLandmarks(5)}, 6)
	return want
}

func runDataset(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Dataset(context.Background(), args, &out, &errb); code != ExitOK {
		t.Fatalf("dataset %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

func seqOfStem(t *testing.T, stem string) uint64 {
	t.Helper()
	var hash string
	var seq uint64
	if _, err := fmt.Sscanf(strings.ReplaceAll(stem, "-", " "), "vl %s %d", &hash, &seq); err != nil {
		t.Fatalf("stem %q: %v", stem, err)
	}
	return seq
}

// TestDatasetExportImport: export holds exactly the latest visible
// edited and manual entries with their landmarks, no patient id, stable
// hashes; the Python trainer reads it back; import dedups by image.
func TestDatasetExportImport(t *testing.T) {
	data := t.TempDir()
	want := seedHistory(t, data)
	out := filepath.Join(t.TempDir(), "export")
	msg := runDataset(t, "export", "--data-dir", data, out)
	if !strings.Contains(msg, "exported 2 cases") || !strings.Contains(msg, "1 edited, 1 manual") {
		t.Errorf("summary %q", msg)
	}
	stems, err := dogheart.Stems(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(stems) != len(want) {
		t.Fatalf("exported %v, want seqs %v", stems, want)
	}
	side, err := dogheart.ReadSidecar(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Cases) != len(want) {
		t.Fatalf("provenance has %d cases", len(side.Cases))
	}
	for _, p := range side.Cases {
		e, ok := want[seqOfStem(t, p.Case)]
		if !ok {
			t.Fatalf("case %s is not an expected entry", p.Case)
		}
		if p.Kind != e.Kind || p.ModelVersion != "v3.2.0" || !p.Date.Equal(e.Time) || p.VLASPoint == nil || *p.VLASPoint != e.Landmarks[4] {
			t.Errorf("provenance %+v for entry %+v", p, e)
		}
	}

	// No patient id (nor customer) anywhere in the folder; the salt stays home.
	salt, _ := os.ReadFile(saltPath(data))
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		for _, s := range []string{"PAT-SECRET-4711", "OWNER-ZED-99", "MODEL-ONLY-5", "clinic-a", "clinic-b", strings.TrimSpace(string(salt))} {
			if bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(s))) || strings.Contains(path, s) {
				t.Errorf("%s reveals %q", path, s)
			}
		}
		return nil
	})

	// A second export with the same data dir hashes the same; another
	// data dir's salt differs.
	out2 := filepath.Join(t.TempDir(), "again")
	runDataset(t, "export", "--data-dir", data, out2)
	side2, _ := dogheart.ReadSidecar(out2)
	other := t.TempDir()
	seedHistory(t, other)
	out3 := filepath.Join(t.TempDir(), "other")
	runDataset(t, "export", "--data-dir", other, out3)
	side3, _ := dogheart.ReadSidecar(out3)
	for i := range side.Cases {
		if side2.Cases[i].Patient != side.Cases[i].Patient || side2.Cases[i].Case != side.Cases[i].Case {
			t.Errorf("re-export hash %s != %s", side2.Cases[i].Patient, side.Cases[i].Patient)
		}
		if side3.Cases[i].Patient == side.Cases[i].Patient {
			t.Errorf("another clinic's salt gave the same hash %s", side.Cases[i].Patient)
		}
	}
	// Exporting into a non-empty folder is refused.
	var errb bytes.Buffer
	if code := Dataset(context.Background(), []string{"export", "--data-dir", data, out}, &bytes.Buffer{}, &errb); code != ExitRejected {
		t.Errorf("export into a full folder: exit %d %s", code, errb.String())
	}

	checkPython(t, out, side, want)

	// Import: the export, then again (all duplicates), then a plain
	// DogHeart copy without the sidecar (duplicates by image).
	if msg := runDataset(t, "import", "--data-dir", data, out); !strings.Contains(msg, "imported 2 cases") || !strings.Contains(msg, "vertebral span: ") || !strings.Contains(msg, "of the 2 imported labels counted with the image's own vertebral length") {
		t.Errorf("import: %q", msg)
	}
	if msg := runDataset(t, "import", "--data-dir", data, out2); !strings.Contains(msg, "imported 0 cases") || !strings.Contains(msg, "2 already") {
		t.Errorf("re-import: %q", msg)
	}
	plain := t.TempDir()
	os.CopyFS(plain, os.DirFS(out3))
	os.Remove(filepath.Join(plain, dogheart.ProvenanceFile))
	if msg := runDataset(t, "import", "--data-dir", data, plain); !strings.Contains(msg, "imported 0 cases") {
		t.Errorf("plain import of the same images: %q", msg)
	}
	pool, _ := dogheart.ReadSidecar(PoolDir(data))
	ps, _ := dogheart.Stems(PoolDir(data))
	if len(pool.Cases) != 2 || len(ps) != 2 {
		t.Fatalf("pool %v %+v", ps, pool.Cases)
	}
	for _, p := range pool.Cases {
		var src *dogheart.Provenance
		for i := range side.Cases {
			if side.Cases[i].ImageSHA256 == p.ImageSHA256 {
				src = &side.Cases[i]
			}
		}
		if src == nil || p.Kind != src.Kind || p.Patient != src.Patient || *p.VLASPoint != *src.VLASPoint {
			t.Errorf("pool case %+v lost its provenance %+v", p, src)
		}
	}
	// A new plain case is added with kind dogheart.
	extra := t.TempDir()
	if err := dogheart.WriteCase(extra, "dog1", testPNG(t, 50, 50, 99), [6][2]float64{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(extra, "Images", "bad.png"), testPNG(t, 20, 20, 7), 0o644)
	os.WriteFile(filepath.Join(extra, "Labels", "bad.mat"), []byte("six_points = [1 2; 3 4]"), 0o644)
	if msg := runDataset(t, "import", "--data-dir", data, extra); !strings.Contains(msg, "imported 1 cases") || !strings.Contains(msg, "1 with a label") {
		t.Errorf("plain import: %q", msg)
	}
	pool, _ = dogheart.ReadSidecar(PoolDir(data))
	if len(pool.Cases) != 3 || pool.Cases[2].Kind != "dogheart" {
		t.Errorf("pool after plain import %+v", pool.Cases)
	}
	if code := Dataset(context.Background(), []string{"import", "--data-dir", data, t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{}); code != ExitRejected {
		t.Errorf("import of an empty folder: exit %d", code)
	}
}

// checkPython reads the export with models/train/cardiac/dataset.py and compares
// the six labelled landmarks with the stored ones.
func checkPython(t *testing.T, dir string, side dogheart.Sidecar, want map[uint64]repo.HistoryEntry) {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy, numpy, PIL").Run(); err != nil {
		t.Logf("SKIP python read-back: %s with scipy, numpy and PIL is not available (apt-get install python3-scipy python3-pil): %v", py, err)
		return
	}
	script := `import sys, json, glob, os
from cardiac import dataset
imgs, lms, masks = dataset.load_dogheart(sys.argv[1], 224)
assert imgs.shape == (len(glob.glob(os.path.join(sys.argv[1], "Images", "*.png"))), 224, 224), imgs.shape
print(json.dumps([[p.tolist(), m.tolist()] for _, p, m in dataset.read_dogheart(sys.argv[1])]))`
	cmd := exec.Command(py, "-c", script, dir)
	cmd.Dir = filepath.Join("..", "models", "train")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python reader: %v %s", err, b)
	}
	var got [][2]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("python output %s: %v", b, err)
	}
	stems, _ := dogheart.Stems(dir) // read_dogheart's order (sorted)
	if len(got) != len(stems) {
		t.Fatalf("python read %d cases, want %d", len(got), len(stems))
	}
	for i, stem := range stems {
		var pts [][2]float64
		var mask []float64
		json.Unmarshal(got[i][0], &pts)
		json.Unmarshal(got[i][1], &mask)
		e := want[seqOfStem(t, stem)]
		// All seven, VLAS included: the format has no VLAS point, the
		// reader takes it from the sidecar (provenance.json).
		for k := range 7 {
			if mask[k] != 1 || math.Abs(pts[k][0]-e.Landmarks[k][0]) > 1e-9 || math.Abs(pts[k][1]-e.Landmarks[k][1]) > 1e-9 {
				t.Errorf("%s landmark %d: python %v mask %v, stored %v", stem, k, pts[k], mask[k], e.Landmarks[k])
			}
		}
	}
}
