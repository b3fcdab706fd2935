package errstatus

import (
	"testing"

	"vetlens/app/apperr"
)

// TestStatusTable: every use-case error kind has its row in the status
// table, with the status the spec gives it. A new kind without a row
// fails here.
func TestStatusTable(t *testing.T) {
	kinds := map[apperr.Kind]int{
		apperr.KindInternal: 500, apperr.KindInvalid: 400, apperr.KindTooLarge: 413,
		apperr.KindUnauthorized: 403, apperr.KindUnavailable: 503, apperr.KindNotFound: 404,
		apperr.KindUnprocessable: 422, apperr.KindConflict: 409, apperr.KindBusy: 503,
		apperr.KindTooMany: 429, apperr.KindNoSpace: 507,
	}
	for _, k := range apperr.Kinds() {
		want, ok := kinds[k]
		if !ok {
			t.Errorf("kind %d: not in this test's table", k)
			continue
		}
		if _, ok := byKind[k]; !ok {
			t.Errorf("kind %d: no row in the status table", k)
		}
		if got := Of(k); got != want {
			t.Errorf("Of(kind %d) = %d, want %d", k, got, want)
		}
	}
	if len(kinds) != len(apperr.Kinds()) {
		t.Errorf("this test names %d kinds, apperr has %d", len(kinds), len(apperr.Kinds()))
	}
	if got := Of(apperr.Kind(99)); got != 500 {
		t.Errorf("an unknown kind: %d, want 500", got)
	}
}
