package app

// Health is the /v3/health body.
type Health struct {
	Status             string `json:"status"`
	ModelsLoaded       int    `json:"models_loaded"`
	PopModelsLoaded    int    `json:"pop_models_loaded"`
	PopPipelineEnabled bool   `json:"pop_pipeline_enabled"`
	ModelVersion       string `json:"model_version"`
}

// ExpectedModels is the expected count of prediction and of PoP models.
const ExpectedModels = 5

// CardiacHealth reports the loaded models: healthy when the 5 prediction
// models are loaded and the PoP pipeline is enabled, degraded otherwise.
// pop_models_loaded is the pipeline's own count (a classical-vision
// pipeline may load none and still be enabled).
func (s *Service) CardiacHealth() Health {
	h := Health{Status: "healthy"}
	if s.cardiac != nil {
		h.ModelsLoaded = s.cardiac.LandmarkModels()
		h.ModelVersion = s.cardiac.ModelVersion()
	}
	if s.pop != nil {
		h.PopModelsLoaded = s.pop.ModelsLoaded()
		h.PopPipelineEnabled = true
	}
	if h.ModelsLoaded < ExpectedModels || !h.PopPipelineEnabled {
		h.Status = "degraded"
	}
	return h
}
