// Package usgv1 is the wire layer of the USG screening spec (usg-v1,
// /work/shared/spec/usg-v1.md, docs/api.md): the predict request parser,
// the stable error codes, the error body and the response, version and
// health bodies. The engine (engine/usg) validates and computes on plain
// values and returns them; the HTTP status each code is
// answered with is api/errstatus's, the wire layer's one status table.
package usgv1

// Code is a stable error code of the USG service (spec usg-v1, Errors):
// clients may branch on it.
type Code string

// The spec's error codes.
const (
	CodeInvalidJSON    Code = "invalid_json"
	CodeInvalidPayload Code = "invalid_payload"
	CodeMissing        Code = "missing_features"
	CodeOutOfRange     Code = "out_of_range"
	CodeInvalidValue   Code = "invalid_value"
	CodeMissingAPIKey  Code = "missing_api_key"
	CodeInvalidAPIKey  Code = "invalid_api_key"
	CodeInternal       Code = "internal_error"
)

// Codes the HTTP layer adds to the spec's for answers the spec does not
// show (docs/api.md).
const (
	CodePayloadTooLarge     Code = "payload_too_large"
	CodeRateLimited         Code = "rate_limited"
	CodeServiceUnavailable  Code = "service_unavailable"
	CodeNotFound            Code = "not_found"
	CodeMethodNotAllowed    Code = "method_not_allowed"
	CodeInsufficientStorage Code = "insufficient_storage"
	CodeRequestTimeout      Code = "request_timeout"
	// CodeHTTPSRequired: a request with a key over plain HTTP.
	CodeHTTPSRequired Code = "https_required"
)

// Codes lists every code above, the spec's first. A test checks that it
// names each Code constant of the package.
func Codes() []Code {
	return []Code{
		CodeInvalidJSON, CodeInvalidPayload, CodeMissing, CodeOutOfRange, CodeInvalidValue,
		CodeMissingAPIKey, CodeInvalidAPIKey, CodeInternal,
		CodePayloadTooLarge, CodeRateLimited, CodeServiceUnavailable, CodeNotFound,
		CodeMethodNotAllowed, CodeInsufficientStorage, CodeRequestTimeout, CodeHTTPSRequired,
	}
}
