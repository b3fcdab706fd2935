package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"vetlens/internal/config"
	"vetlens/internal/diskfree"
)

// fakeDisk is a free-space probe reporting a fixed reading.
type fakeDisk diskfree.Usage

func (d fakeDisk) Usage() (diskfree.Usage, error) { return diskfree.Usage(d), nil }

// TestDiskGuard: with the data directory's disk below the warn threshold
// health is degraded and writes still work; below the refuse threshold
// every writing route (cardiac predict and stream, PoP start, USG
// predict) answers 507 in its spec's error shape before any work, and
// nothing reaches the ledger, while health still answers.
func TestDiskGuard(t *testing.T) {
	const total = 100 << 30
	tests := []struct {
		name       string
		free       uint64
		wantHealth string // /v3/health status
		wantUSG    string // /usg/v1/health status
		wantWrite  int    // status of each writing route
		wantEvents int    // ledger events after the writes (predict, stream and USG bill)
	}{
		{"plenty", 50 << 30, "healthy", "ok", http.StatusOK, 3},
		{"low", config.DiskWarnBytes - 1, "degraded", "degraded", http.StatusOK, 3},
		{"low share", total * (config.DiskWarnPercent - 1) / 100, "degraded", "degraded", http.StatusOK, 3},
		{"full", config.DiskRefuseBytes - 1, "degraded", "degraded", http.StatusInsufficientStorage, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}},
				disk: fakeDisk{Free: tt.free, Total: total}})

			resp, b := a.do("GET", "/v3/health", a.key, nil)
			h := obj(t, b)
			if resp.StatusCode != http.StatusOK || h["status"] != tt.wantHealth {
				t.Fatalf("/v3/health = %d %s, want 200 status %q", resp.StatusCode, b, tt.wantHealth)
			}
			if _, has := h["reasons"]; has != (tt.wantHealth != "healthy") {
				t.Errorf("/v3/health reasons present %v for status %q: %s", has, h["status"], b)
			}
			resp, b = a.do("GET", "/usg/v1/health", "", nil)
			if u := obj(t, b); resp.StatusCode != http.StatusOK || u["status"] != tt.wantUSG {
				t.Fatalf("/usg/v1/health = %d %s, want 200 status %q", resp.StatusCode, b, tt.wantUSG)
			}

			writes := []struct {
				path string
				body any
			}{
				{"/v3/predict", map[string]any{"image": b64(grayPNG(t, 1, 64, 64)), "uuid": "rex"}},
				{"/v3/predict/stream", map[string]any{"image": b64(grayPNG(t, 1, 64, 64))}},
				{"/v3/pop-session/start", map[string]any{}},
				{"/usg/v1/predict", usgValid},
			}
			for _, w := range writes {
				resp, b := a.do("POST", w.path, a.key, w.body)
				if resp.StatusCode != tt.wantWrite {
					t.Fatalf("%s = %d %s, want %d", w.path, resp.StatusCode, b, tt.wantWrite)
				}
				if tt.wantWrite != http.StatusInsufficientStorage {
					continue
				}
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("%s: 507 without Retry-After", w.path)
				}
				e := obj(t, b)
				if strings.HasPrefix(w.path, "/usg/") {
					d, _ := e["error"].(map[string]any)
					if d["code"] != "insufficient_storage" || d["message"] == "" {
						t.Errorf("%s: body %s, want {error: {code: insufficient_storage, message}}", w.path, b)
					}
				} else if msg, _ := e["error"].(string); !strings.Contains(msg, "disk full") {
					t.Errorf("%s: body %s, want {error: \"disk full ...\"}", w.path, b)
				}
			}
			evs, err := a.svc.Repos().Ledger.Events(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tt.wantEvents {
				t.Fatalf("%d ledger events, want %d", len(evs), tt.wantEvents)
			}
		})
	}
}
