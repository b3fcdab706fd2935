// Package admin holds the bodies of the key administration protocol that
// `vetlens keys` speaks to a running server over its admin socket
// (platform/httpapi.AdminHandler): never on the network, and in neither
// spec, but a wire format all the same.
package admin

// CreateRequest is the body of POST /keys.
type CreateRequest struct {
	Customer string `json:"customer"`
	Tier     string `json:"tier,omitempty"`
}

// Created is its answer: the key, shown once.
type Created struct {
	Key  string  `json:"key"`
	Info KeyInfo `json:"info"`
}

// KeyInfo is a key as listed (GET /keys) or revoked (POST
// /keys/{prefix}/revoke): never the secret. Its fields are app.KeyInfo's,
// in its order, so the adapters convert one to the other (KeyInfo(k)).
type KeyInfo struct {
	Prefix   string `json:"prefix"`
	Customer string `json:"customer"`
	Tier     string `json:"tier"`
	Created  string `json:"created"`
	Status   string `json:"status"`
	Rechecks int    `json:"rechecks_this_month"`
}
