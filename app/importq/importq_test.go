package importq_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/importq"
	"vetlens/engine/testmodels"
	"vetlens/internal/dicomtest"
	"vetlens/platform/store"
)

// newService is an app.Service on the shipped cardiac models.
func newService(t *testing.T) *app.Service {
	t.Helper()
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := app.New(app.Deps{Repos: st.Repos(), Cardiac: testmodels.Cardiac(t)}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// start runs a queue on dir measuring with svc until the test ends.
func start(t *testing.T, svc *app.Service, dir string) *importq.Queue {
	t.Helper()
	q := importq.New(importq.Config{Dir: dir, Interval: 50 * time.Millisecond}, func(ctx context.Context, b []byte) (*app.Measurement, error) {
		return svc.Cardiac.MeasureDesktop(ctx, "", b)
	})
	changed := make(chan struct{}, 1)
	q.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return q
}

// waitFor polls the queue until ok holds for its items (at most 60 s).
func waitFor(t *testing.T, q *importq.Queue, what string, ok func([]importq.Item) bool) []importq.Item {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		items := q.Items()
		if ok(items) {
			return items
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: items %+v, folder error %q", what, items, q.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func finished(items []importq.Item, n int) bool {
	done := 0
	for _, it := range items {
		if it.State == importq.Done || it.State == importq.Failed {
			done++
		}
	}
	return len(items) >= n && done == len(items)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestQueueMeasuresDroppedFiles drops files into a watched folder: a
// DICOM (under a console's extensionless name) and a JPEG are measured
// (the DICOM as its source JPEG, with its patient), a text file fails as
// not an image, a copy in progress and a hidden file are ignored, and a
// file that was there before watching started is left alone.
func TestQueueMeasuresDroppedFiles(t *testing.T) {
	set := dicomtest.Build(t)
	svc := newService(t)
	dir := t.TempDir()
	copyFile(t, set.SourceJPEG, filepath.Join(dir, "old.jpg"))
	q := start(t, svc, dir)

	copyFile(t, set.Get(t, "mono1-16bit").Path, filepath.Join(dir, "IM000001"))
	copyFile(t, set.SourceJPEG, filepath.Join(dir, "thorax.jpg"))
	os.WriteFile(filepath.Join(dir, "readme.txt"), []byte("export notes"), 0o644)
	copyFile(t, set.SourceJPEG, filepath.Join(dir, "next.jpg.part"))
	copyFile(t, set.SourceJPEG, filepath.Join(dir, ".hidden.jpg"))
	items := waitFor(t, q, "three files measured", func(it []importq.Item) bool { return finished(it, 3) })

	byName := map[string]importq.Item{}
	for _, it := range items {
		byName[it.Name] = it
	}
	if len(items) != 3 {
		t.Fatalf("items %+v, want IM000001, thorax.jpg and readme.txt", items)
	}
	dcm, jpg, txt := byName["IM000001"], byName["thorax.jpg"], byName["readme.txt"]
	if dcm.State != importq.Done || jpg.State != importq.Done || dcm.Measurement == nil || jpg.Measurement == nil {
		t.Fatalf("DICOM %+v, JPEG %+v", dcm, jpg)
	}
	if dcm.Measurement.DICOM == nil || dcm.Measurement.PatientID != dicomtest.PatientID || jpg.Measurement.DICOM != nil {
		t.Errorf("DICOM patient %q, tags %v; JPEG tags %v", dcm.Measurement.PatientID, dcm.Measurement.DICOM, jpg.Measurement.DICOM)
	}
	dv, jv := dcm.Measurement.Result.VHS, jpg.Measurement.Result.VHS
	if dv == nil || jv == nil || *dv != *jv {
		t.Errorf("VHS DICOM %v, JPEG %v: want the same value", dv, jv)
	}
	if txt.State != importq.Failed || !strings.Contains(txt.Err, "not a DICOM, JPEG or PNG") {
		t.Errorf("text file %+v", txt)
	}
	for i, it := range items {
		if it.Seq != i+1 || it.Added.IsZero() || it.Finished.Before(it.Added) {
			t.Errorf("item %d: %+v", i, it)
		}
	}
	// A file rewritten with new content is taken again.
	time.Sleep(20 * time.Millisecond)
	copyFile(t, set.Get(t, "jpeg-baseline").Path, filepath.Join(dir, "thorax.jpg"))
	items = waitFor(t, q, "the rewritten file", func(it []importq.Item) bool { return finished(it, 4) })
	if last := items[len(items)-1]; last.Name != "thorax.jpg" || last.State != importq.Done || last.Measurement.DICOM == nil {
		t.Errorf("rewritten file %+v", last)
	}
}

// TestQueueFolderError: a missing folder is reported, and files are taken
// once it exists.
func TestQueueFolderError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "share")
	measured := make(chan string, 4)
	q := importq.New(importq.Config{Dir: dir, Interval: 20 * time.Millisecond}, func(ctx context.Context, b []byte) (*app.Measurement, error) {
		measured <- app.ImageKind(b)
		return &app.Measurement{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	waitFor(t, q, "folder error", func([]importq.Item) bool { return strings.Contains(q.Err(), "no such file") })
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "a.png"), []byte("\x89PNG\r\n\x1a\n...."), 0o644)
	select {
	case k := <-measured:
		if k != "png" || q.Err() != "" {
			t.Fatalf("measured %q, folder error %q", k, q.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("file not taken: %+v %q", q.Items(), q.Err())
	}
}

// TestStorescuToWatchedFolder is the DICOM receiver set-up of docs/dicom.md:
// dcmtk's storescp writes what it receives into the watched folder, a
// storescu send (as an X-ray console sends) lands there and is measured.
func TestStorescuToWatchedFolder(t *testing.T) {
	for _, tool := range []string{"storescp", "storescu"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("dcmtk's %s not installed (make deps installs dcmtk)", tool)
		}
	}
	set := dicomtest.Build(t)
	svc := newService(t)
	dir := t.TempDir()
	q := start(t, svc, dir)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	scp := exec.Command("storescp", "--aetitle", "VETLENS", "+xa", "--output-directory", dir, fmt.Sprint(port))
	var scpOut strings.Builder
	scp.Stdout, scp.Stderr = &scpOut, &scpOut
	if err := scp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { scp.Process.Kill(); scp.Wait() }()
	var sent bool
	for range 50 { // until storescp listens
		out, err := exec.Command("storescu", "--propose-jpeg8", "--aetitle", "XRAY", "--call", "VETLENS", "127.0.0.1", fmt.Sprint(port),
			set.Get(t, "jpeg-baseline").Path, set.Get(t, "windowed-12bit").Path).CombinedOutput()
		if err == nil {
			sent = true
			break
		}
		if !strings.Contains(string(out), "Connection refused") {
			t.Fatalf("storescu: %v: %s\nstorescp: %s", err, out, scpOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sent {
		t.Fatalf("storescp never listened: %s", scpOut.String())
	}
	items := waitFor(t, q, "two received files measured", func(it []importq.Item) bool { return finished(it, 2) })
	for _, it := range items {
		if it.State != importq.Done || it.Measurement.DICOM == nil || it.Measurement.DICOM.Tags.PatientID != dicomtest.PatientID || it.Measurement.Result == nil {
			t.Errorf("received %s: %+v", it.Name, it)
			continue
		}
		vhs := "withheld"
		if v := it.Measurement.Result.VHS; v != nil {
			vhs = fmt.Sprintf("%.2f", *v)
		}
		t.Logf("received %s: result %d, VHS %s", it.Name, it.Measurement.Result.Code, vhs)
	}
}
