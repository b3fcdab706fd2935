package usgv1

import "vetlens/engine/usg"

// Health is the /usg/v1/health body: the engine's health (the spec's
// body) plus reasons when degraded.
type Health struct {
	Status         string `json:"status"`
	Service        string `json:"service"`
	ModelVersion   string `json:"model_version"`
	ServiceVersion string `json:"service_version"`
	// Reasons say why status is "degraded" (absent when ok).
	Reasons []string `json:"reasons,omitempty"`
}

// NewHealth is the health body of the engine's health values and the
// reasons it is degraded (app.USGHealth).
func NewHealth(h usg.Health, reasons []string) Health {
	return Health{Status: h.Status, Service: h.Service, ModelVersion: h.ModelVersion, ServiceVersion: h.ServiceVersion, Reasons: reasons}
}
