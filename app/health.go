package app

import (
	"fmt"

	"vetlens/engine/usg"
	"vetlens/internal/membudget"
)

// Health is the cardiac service's health: the loaded models and whether
// it is "healthy" or "degraded", and why. Its wire body is
// cardiacv3.Health, which has the same fields.
type Health struct {
	Status             string
	ModelsLoaded       int
	PopModelsLoaded    int
	PopPipelineEnabled bool
	ModelVersion       string
	// Reasons say why status is "degraded" (empty when healthy).
	Reasons []string
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

// USGHealth is the USG engine's health with its status "degraded"
// and a reason when the store's disk is low or full (the spec's "ok"
// otherwise); ErrUSGUnavailable when the model is not loaded.
func (s *Status) USGHealth() (USGHealth, error) {
	if s.usg == nil {
		return USGHealth{}, ErrUSGUnavailable
	}
	h := USGHealth{Health: s.usg.Health()}
	if d := s.Disk(); d.Level != DiskOK {
		h.Status = "degraded"
		h.Reasons = []string{d.Reason}
	}
	return h, nil
}

// USGHealth is the USG engine's health plus reasons when degraded. Its
// wire body is usgv1.Health (usgv1.NewHealth).
type USGHealth struct {
	usg.Health
	// Reasons say why status is "degraded" (empty when ok).
	Reasons []string
}

// PixelStats reports the pixel memory budget's capacity and counters.
func (s *Status) PixelStats() membudget.Stats { return s.pixels.Stats() }
