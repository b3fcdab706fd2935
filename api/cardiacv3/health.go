package cardiacv3

// Health is the /v3/health body. Its fields are app.Health's, in its
// order, so the adapter converts one to the other (Health(h)): a field
// added to one and not the other does not compile.
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
