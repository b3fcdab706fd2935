package app

import "vetlens/api/cardiacv3"

// CardiacRequest is a parsed POST /v3/predict or /v3/predict/stream body:
// the wire layer reads it (cardiacv3.ReadCardiacRequest, the streaming
// reader and its limits) and the use cases take it.
type CardiacRequest = cardiacv3.CardiacRequest
