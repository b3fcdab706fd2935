package app

import (
	"fmt"

	"vetlens/engine/usg"
	"vetlens/internal/membudget"
)

// Health is the /v3/health body.
type Health struct {
	Status             string `json:"status"`
	ModelsLoaded       int    `json:"models_loaded"`
	PopModelsLoaded    int    `json:"pop_models_loaded"`
	PopPipelineEnabled bool   `json:"pop_pipeline_enabled"`
	ModelVersion       string `json:"model_version"`
	// Reasons say why status is "degraded" (absent when healthy). An
	// addition to the spec's shape; clients that do not know it ignore it.
	Reasons []string `json:"reasons,omitempty"`
}

// ExpectedModels is the expected count of prediction and of PoP models.
const ExpectedModels = 5

// CardiacHealth reports the loaded models: healthy when the 5 prediction
// models are loaded and the PoP pipeline is enabled, degraded otherwise.
// pop_models_loaded is the pipeline's own count (a classical-vision
// pipeline may load none and still be enabled). Free space on the store's
// disk below config.DiskWarnBytes (or DiskWarnPercent) degrades it too;
// Reasons list why.
func (s *Status) CardiacHealth() Health {
	h := Health{Status: "healthy"}
	if s.cardiac != nil {
		h.ModelsLoaded = s.cardiac.LandmarkModels()
		h.ModelVersion = s.cardiac.ModelVersion()
	}
	if s.pop != nil {
		h.PopModelsLoaded = s.pop.ModelsLoaded()
		h.PopPipelineEnabled = true
	}
	if h.ModelsLoaded < ExpectedModels {
		h.Reasons = append(h.Reasons, fmt.Sprintf("%d of %d prediction models loaded", h.ModelsLoaded, ExpectedModels))
	}
	if !h.PopPipelineEnabled {
		h.Reasons = append(h.Reasons, "PoP pipeline not loaded")
	}
	if d := s.Disk(); d.Level != DiskOK {
		h.Reasons = append(h.Reasons, d.Reason)
	}
	if len(h.Reasons) > 0 {
		h.Status = "degraded"
	}
	return h
}

// USGHealth is the USG engine's health body with its status "degraded"
// and a reason when the store's disk is low or full (the spec's "ok"
// otherwise); ErrUSGUnavailable when the model is not loaded.
func (s *Status) USGHealth() (USGHealthBody, error) {
	if s.usg == nil {
		return USGHealthBody{}, ErrUSGUnavailable
	}
	h := USGHealthBody{Health: s.usg.Health()}
	if d := s.Disk(); d.Level != DiskOK {
		h.Status = "degraded"
		h.Reasons = []string{d.Reason}
	}
	return h, nil
}

// USGHealthBody is /usg/v1/health: the spec's body plus reasons when
// degraded.
type USGHealthBody struct {
	usg.Health
	// Reasons say why status is "degraded" (absent when ok).
	Reasons []string `json:"reasons,omitempty"`
}

// PixelStats reports the pixel memory budget's capacity and counters.
func (s *Status) PixelStats() membudget.Stats { return s.pixels.Stats() }
