package usgv1

import "vetlens/engine/usg"

// Health is the /usg/v1/health body: the engine's health body (the
// spec's) plus reasons when degraded. Its fields are app.USGHealth's, so
// the adapter converts one to the other (Health(h)).
type Health struct {
	usg.Health
	// Reasons say why status is "degraded" (absent when ok).
	Reasons []string `json:"reasons,omitempty"`
}
