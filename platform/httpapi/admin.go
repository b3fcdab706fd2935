package httpapi

import (
	"encoding/json"
	"net/http"

	"vetlens/api/admin"
	"vetlens/api/errstatus"
	"vetlens/app"
)

// AdminHandler serves key administration to `vetlens keys` while the
// server holds the database: POST /keys (create), GET /keys (list),
// POST /keys/{prefix}/revoke; its bodies are package api/admin's. It must only be served on the admin socket
// (internal/adminsock: the unix socket in the data dir, mode 0600, or on
// Windows loopback TCP behind its token check), never on the network.
func AdminHandler(svc *app.Service) http.Handler {
	mux := http.NewServeMux()
	fail := func(w http.ResponseWriter, err error) {
		// the one error -> status table (a disk-full store: 507, not 500)
		writeJSON(w, errstatus.Of(app.KindOf(err)), map[string]string{"error": err.Error()})
	}
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		var req admin.CreateRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request: " + err.Error()})
			return
		}
		key, info, err := svc.Accounts.CreateKey(r.Context(), req.Customer, app.Tier(req.Tier))
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, admin.Created{Key: key, Info: admin.KeyInfo(info)})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		ks, err := svc.Accounts.ListKeys(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		out := make([]admin.KeyInfo, len(ks))
		for i, k := range ks {
			out[i] = admin.KeyInfo(k)
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /keys/{prefix}/revoke", func(w http.ResponseWriter, r *http.Request) {
		info, err := svc.Accounts.RevokeKey(r.Context(), r.PathValue("prefix"))
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, admin.KeyInfo(info))
	})
	return mux
}
