package ui

import (
	"testing"

	"vetlens/app"
)

// TestMoneyLabels: amounts are shown in dollars with two decimals from
// whole cents.
func TestMoneyLabels(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{statementText(app.Statement{Month: "2026-03", Usage: 3, Tier: app.TierPaygo, Charges: 900}), "2026-03: 3 billable calls, paygo tier, $9.00"},
		{statementText(app.Statement{Month: "2026-03", Usage: 13, Tier: app.TierPaygo, Charges: 187}), "2026-03: 13 billable calls, paygo tier, $1.87"},
		{statementText(app.Statement{Month: "2026-04", Tier: app.TierPaygo}), "2026-04: 0 billable calls, paygo tier, $0.00"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
