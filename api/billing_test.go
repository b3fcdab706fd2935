package api

import (
	"encoding/json"
	"testing"
)

// TestBillingWire: the billing object on the wire is the spec's, the rate
// a number of dollars, converted from cents only here.
func TestBillingWire(t *testing.T) {
	usage := 101
	rate := func(c int64) *int64 { return &c }
	for _, tc := range []struct {
		name string
		b    Billing
		want string
	}{
		{"single at starter", NewBilling(true, "valid_vhs", "single", &usage, "starter", rate(250)),
			`{"billable":true,"reason":"valid_vhs","call_type":"single","monthly_usage":101,"tier":"starter","rate":2.5}`},
		{"session at paygo", NewBilling(true, "valid_vhs", "session", &usage, "paygo", rate(400)),
			`{"billable":true,"reason":"valid_vhs","call_type":"session","monthly_usage":101,"tier":"paygo","rate":4}`},
		{"usg", NewBilling(true, "valid_vhs", "usg", &usage, "paygo", rate(50)),
			`{"billable":true,"reason":"valid_vhs","call_type":"usg","monthly_usage":101,"tier":"paygo","rate":0.5}`},
		{"custom enterprise", NewBilling(true, "valid_vhs", "single", &usage, "enterprise", rate(129)),
			`{"billable":true,"reason":"valid_vhs","call_type":"single","monthly_usage":101,"tier":"enterprise","rate":1.29}`},
		{"not billed", NewBilling(false, "recheck_24h", "", &usage, "starter", nil),
			`{"billable":false,"reason":"recheck_24h","monthly_usage":101,"tier":"starter"}`},
		{"billing error", NewBilling(false, "billing_error", "", nil, "", nil), `{"billable":false,"reason":"billing_error"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := json.Marshal(tc.b)
			if err != nil || string(j) != tc.want {
				t.Fatalf("%s, %v\nwant %s", j, err, tc.want)
			}
			// Inside a response body, by value and by pointer.
			j, _ = json.Marshal(struct {
				B  Billing  `json:"billing"`
				BP *Billing `json:"billing_p"`
			}{tc.b, &tc.b})
			if want := `{"billing":` + tc.want + `,"billing_p":` + tc.want + `}`; string(j) != want {
				t.Fatalf("nested: %s\nwant %s", j, want)
			}
		})
	}
}

// TestHistoricWire: historic_vhs is null without a uuid, [] for a uuid
// without earlier values, [[day, value], ...] otherwise, and absent on
// rejection.
func TestHistoricWire(t *testing.T) {
	var b SingleBody
	j, _ := json.Marshal(b)
	if string(j) != `{"vhs":null,"vlas":null,"result_code":0,"result_description":"","model_version":"","billing":{"billable":false,"reason":""}}` {
		t.Fatalf("rejection: %s", j)
	}
	for _, tc := range []struct {
		vhs  []Dated
		want string
	}{
		{nil, `null`}, {[]Dated{}, `[]`}, {[]Dated{{"2026-01-15", 9.1}, {"2026-01-17", 10}}, `[["2026-01-15",9.1],["2026-01-17",10]]`},
	} {
		b.SetHistoric(tc.vhs, nil)
		j, _ := json.Marshal(struct {
			V *[]Dated `json:"v"`
		}{b.HistoricVHS})
		if string(j) != `{"v":`+tc.want+`}` {
			t.Errorf("%v: %s, want %s", tc.vhs, j, tc.want)
		}
	}
}
