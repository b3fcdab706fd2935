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
// models and the 5 PoP models are loaded, degraded otherwise.
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
	if h.ModelsLoaded < ExpectedModels || h.PopModelsLoaded < ExpectedModels {
		h.Status = "degraded"
	}
	return h
}
