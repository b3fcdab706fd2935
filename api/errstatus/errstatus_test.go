package errstatus

import (
	"testing"

	"vetlens/api/usgv1"
	"vetlens/app/apperr"
)

// TestStatusTable: every use-case error kind and every usg-v1 code has
// its row in the one status table, with the status the specs (and
// docs/api.md's added rows) give it; a kind with a usg-v1 code is answered
// with the same status on both specs. A new kind or code without a row
// fails here.
func TestStatusTable(t *testing.T) {
	kinds := map[apperr.Kind]kindRow{
		apperr.KindInternal:      {500, usgv1.CodeInternal},
		apperr.KindInvalid:       {400, usgv1.CodeInvalidValue},
		apperr.KindTooLarge:      {413, usgv1.CodePayloadTooLarge},
		apperr.KindUnauthorized:  {403, usgv1.CodeInvalidAPIKey},
		apperr.KindUnavailable:   {503, usgv1.CodeServiceUnavailable},
		apperr.KindNotFound:      {404, usgv1.CodeNotFound},
		apperr.KindUnprocessable: {422, usgv1.CodeInternal},
		apperr.KindConflict:      {409, usgv1.CodeInternal},
		apperr.KindBusy:          {503, usgv1.CodeInternal},
		apperr.KindTooMany:       {429, usgv1.CodeRateLimited},
		apperr.KindNoSpace:       {507, usgv1.CodeInsufficientStorage},
	}
	checkRows(t, apperr.Kinds(), byKind, kinds, func(k apperr.Kind) kindRow { return kindRow{Of(k), USGCode(k)} })
	for k, r := range byKind {
		if r.usg != "" && USG(r.usg) != r.status {
			t.Errorf("kind %d: status %d, but its usg-v1 code %s is answered %d", k, r.status, r.usg, USG(r.usg))
		}
	}
	if got := Of(apperr.Kind(99)); got != 500 {
		t.Errorf("an unknown kind: %d, want 500", got)
	}

	codes := map[usgv1.Code]int{
		usgv1.CodeInvalidJSON: 400, usgv1.CodeInvalidPayload: 400, usgv1.CodeMissing: 400,
		usgv1.CodeOutOfRange: 400, usgv1.CodeInvalidValue: 400, usgv1.CodeMissingAPIKey: 401,
		usgv1.CodeInvalidAPIKey: 403, usgv1.CodeInternal: 500,
		usgv1.CodePayloadTooLarge: 413, usgv1.CodeRateLimited: 429, usgv1.CodeServiceUnavailable: 503,
		usgv1.CodeNotFound: 404, usgv1.CodeMethodNotAllowed: 405, usgv1.CodeInsufficientStorage: 507,
		usgv1.CodeRequestTimeout: 408, usgv1.CodeHTTPSRequired: 403,
	}
	checkRows(t, usgv1.Codes(), byUSGCode, codes, USG)
	if got := USG("no_such_code"); got != 500 {
		t.Errorf("an unknown code: %d, want 500", got)
	}
}

// checkRows checks that each of all (every kind, or every code) has a
// row in the status table and in want, that got answers want's value for
// it, and that want names no more than all.
func checkRows[K comparable, R any, W comparable](t *testing.T, all []K, table map[K]R, want map[K]W, got func(K) W) {
	t.Helper()
	for _, k := range all {
		w, ok := want[k]
		if !ok {
			t.Errorf("%v: not in this test's table", k)
			continue
		}
		if _, ok := table[k]; !ok {
			t.Errorf("%v: no row in the status table", k)
		}
		if g := got(k); g != w {
			t.Errorf("%v: %+v, want %+v", k, g, w)
		}
	}
	if len(want) != len(all) {
		t.Errorf("this test names %d, the package declares %d", len(want), len(all))
	}
}
