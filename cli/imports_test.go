package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/engine/testmodels"
	"vetlens/internal/dicomtest"
	"vetlens/platform/store"
)

// TestServeWatchesImports: `serve --import-dir` measures a DICOM dropped
// into the folder and logs the result with the file's patient; a missing
// folder is refused.
func TestServeWatchesImports(t *testing.T) {
	set := dicomtest.Build(t)
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := app.New(app.Deps{Repos: st.Repos(), Cardiac: testmodels.Cardiac(t)}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := watchImports(ctx, svc, filepath.Join(t.TempDir(), "missing"), log); err == nil {
		t.Fatal("missing folder accepted")
	}
	dir := t.TempDir()
	if err := watchImports(ctx, svc, dir, log); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "DX0001"), set.Get(t, "jpeg-baseline").Bytes(t), 0o644)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(logs.String(), "import: measured"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no result logged: %s", logs.String())
		}
	}
	if l := logs.String(); !strings.Contains(l, "file=DX0001") || !strings.Contains(l, "patient="+dicomtest.PatientID) || !strings.Contains(l, "vhs=") {
		t.Errorf("log %s", l)
	}
}
