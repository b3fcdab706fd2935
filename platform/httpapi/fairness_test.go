package httpapi

import (
	"context"

	"io"
	"net/http"
	"testing"
	"time"
	"vetlens/app"
)

// TestSlowBodiesCountAgainstTheirKeyOnly: one key holding every one of its
// in-flight slots with request bodies that never finish gets 429 for more,
// while another key's calls keep answering (issue 13, per-key fairness).
func TestSlowBodiesCountAgainstTheirKeyOnly(t *testing.T) {
	const limit = 4
	a := newAPI(t, apiOpts{cfg: Config{MaxInFlightPerKey: limit}})
	other, _, err := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	if err != nil {
		t.Fatal(err)
	}
	var writers []*io.PipeWriter
	t.Cleanup(func() {
		for _, w := range writers {
			w.CloseWithError(io.ErrUnexpectedEOF)
		}
	})
	for i := 0; i < limit; i++ {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, err := http.NewRequest("POST", a.srv.URL+"/v3/predict", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-api-key", a.key)
		req.Header.Set("Content-Type", "application/json")
		go func() { // ends when the cleanup breaks its body
			if resp, err := a.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		if _, err := pw.Write([]byte(`{"images": ["`)); err != nil { // and nothing more
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.heldBy(a.key) < limit { // every slow body has its slot
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d slow requests hold a slot", a.heldBy(a.key), limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if resp, _ := a.do("POST", "/usg/v1/predict", a.key, usgFairBody); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the slow key's extra call: %d, want 429 with all %d slots held", resp.StatusCode, limit)
	}
	for _, path := range []string{"/usg/v1/predict", "/usg/v1/predict"} {
		if resp, b := a.do("POST", path, other, usgFairBody); resp.StatusCode != http.StatusOK {
			t.Fatalf("another key while the first holds its slots: %d %s", resp.StatusCode, b)
		}
	}
}

// heldBy is how many in-flight slots the key's requests hold on the server.
func (a *api) heldBy(key string) int {
	a.h.mu.Lock()
	defer a.h.mu.Unlock()
	return a.h.inFlight[app.PrefixOf(key)]
}

var usgFairBody = map[string]any{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14}
