package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"vetlens/api/admin"
)

// TestAdminHandler: the admin socket's key bodies, and its refusals with
// the statuses of the one error table (api/errstatus) and an error body:
// a malformed body and an unknown tier are 400, an unknown prefix 404.
func TestAdminHandler(t *testing.T) {
	a := newAPI(t, apiOpts{})
	h := AdminHandler(a.svc)
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, bytes.NewBufferString(body)))
		return rec.Code, rec.Body.Bytes()
	}
	code, body := do("POST", "/keys", `{"customer":"clinic-b","tier":"paygo"}`)
	var created admin.Created
	if err := json.Unmarshal(body, &created); code != http.StatusOK || err != nil || created.Key == "" || created.Info.Customer != "clinic-b" {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body = do("GET", "/keys", "")
	var list []admin.KeyInfo
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil || len(list) != 2 {
		t.Fatalf("list: %d %s", code, body)
	}
	code, body = do("POST", "/keys/"+created.Info.Prefix+"/revoke", "")
	var revoked admin.KeyInfo
	if err := json.Unmarshal(body, &revoked); code != http.StatusOK || err != nil || revoked.Prefix != created.Info.Prefix {
		t.Fatalf("revoke: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"malformed body", "POST", "/keys", `{"customer":`, http.StatusBadRequest},
		{"unknown tier", "POST", "/keys", `{"customer":"clinic-c","tier":"platinum"}`, http.StatusBadRequest},
		{"unknown prefix", "POST", "/keys/deadbeef/revoke", "", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(tc.method, tc.path, tc.body)
			var e map[string]string
			if err := json.Unmarshal(body, &e); code != tc.want || err != nil || e["error"] == "" {
				t.Fatalf("%d %s, want %d with an error body", code, body, tc.want)
			}
		})
	}
}
