package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 description of both services.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPI serves GET /v3/openapi.json (no key needed: it is documentation).
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDoc)
}
