package app

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestParseDollars(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Cents
		err  bool
	}{
		{in: "3", want: 300},
		{in: "2.5", want: 250},
		{in: "2.50", want: 250},
		{in: "$0.50", want: 50},
		{in: "0.05", want: 5},
		{in: ".5", want: 50},
		{in: " 1.10 ", want: 110},
		{in: "0", want: 0},
		{in: "0.29", want: 29}, // 0.29*100 is 28.999999999999996 in float64
		{in: "1000000", want: MaxCents},
		{in: "", err: true},
		{in: "$", err: true},
		{in: ".", err: true},
		{in: "1.", err: true},
		{in: "abc", err: true},
		{in: "1.005", err: true},
		{in: "0.505", err: true},
		{in: "-1", err: true},
		{in: "+1", err: true},
		{in: "1e2", err: true},
		{in: "1,50", err: true},
		{in: "NaN", err: true},
		{in: "1000000.01", err: true},
		{in: "99999999999999999999", err: true},
	} {
		got, err := ParseDollars(tc.in)
		if tc.err {
			if !errors.Is(err, ErrBadAmount) {
				t.Errorf("ParseDollars(%q) = %d, %v; want ErrBadAmount", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseDollars(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestCentsString(t *testing.T) {
	for _, tc := range []struct {
		c    Cents
		want string
	}{{0, "$0.00"}, {5, "$0.05"}, {50, "$0.50"}, {250, "$2.50"}, {300, "$3.00"}, {123456, "$1234.56"}, {-5, "-$0.05"}, {-250, "-$2.50"}} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("Cents(%d).String() = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestCentsFromDollars(t *testing.T) {
	for _, tc := range []struct {
		d    float64
		want Cents
		err  bool
	}{
		{d: 2.5, want: 250}, {d: 3, want: 300}, {d: 0.1, want: 10}, {d: 0.29, want: 29}, {d: 0, want: 0}, {d: 1e6, want: MaxCents},
		{d: 0.505, err: true}, {d: 0.001, err: true}, {d: -0.01, err: true}, {d: 1e6 + 0.01, err: true},
		{d: math.NaN(), err: true}, {d: math.Inf(1), err: true}, {d: math.Inf(-1), err: true},
	} {
		got, err := CentsFromDollars(tc.d)
		if tc.err {
			if !errors.Is(err, ErrBadAmount) {
				t.Errorf("CentsFromDollars(%v) = %d, %v; want ErrBadAmount", tc.d, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CentsFromDollars(%v) = %d, %v; want %d", tc.d, got, err, tc.want)
		}
	}
}

// TestBillingWire: the billing object on the wire is the spec's, the rate
// a number of dollars, converted from cents only there; it reads back to
// the same cents.
func TestBillingWire(t *testing.T) {
	usage := 101
	rate := func(c Cents) *Cents { return &c }
	for _, tc := range []struct {
		name string
		b    Billing
		want string
	}{
		{"single at starter", Billing{Billable: true, Reason: ReasonValid, CallType: CallSingle, MonthlyUsage: &usage, Tier: TierStarter, Rate: rate(250)},
			`{"billable":true,"reason":"valid_vhs","call_type":"single","monthly_usage":101,"tier":"starter","rate":2.5}`},
		{"session at paygo", Billing{Billable: true, Reason: ReasonValid, CallType: CallSession, MonthlyUsage: &usage, Tier: TierPaygo, Rate: rate(400)},
			`{"billable":true,"reason":"valid_vhs","call_type":"session","monthly_usage":101,"tier":"paygo","rate":4}`},
		{"usg", Billing{Billable: true, Reason: ReasonValid, CallType: CallUSG, MonthlyUsage: &usage, Tier: TierPaygo, Rate: rate(DefaultUSGRate)},
			`{"billable":true,"reason":"valid_vhs","call_type":"usg","monthly_usage":101,"tier":"paygo","rate":0.5}`},
		{"custom enterprise", Billing{Billable: true, Reason: ReasonValid, CallType: CallSingle, MonthlyUsage: &usage, Tier: TierEnterprise, Rate: rate(129)},
			`{"billable":true,"reason":"valid_vhs","call_type":"single","monthly_usage":101,"tier":"enterprise","rate":1.29}`},
		{"not billed", Billing{Reason: ReasonRecheck, MonthlyUsage: &usage, Tier: TierStarter},
			`{"billable":false,"reason":"recheck_24h","monthly_usage":101,"tier":"starter"}`},
		{"billing error", Billing{Reason: ReasonError}, `{"billable":false,"reason":"billing_error"}`},
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
			var back Billing
			if err := json.Unmarshal([]byte(tc.want), &back); err != nil {
				t.Fatal(err)
			}
			if (back.Rate == nil) != (tc.b.Rate == nil) || back.Rate != nil && *back.Rate != *tc.b.Rate || back.Reason != tc.b.Reason || back.Tier != tc.b.Tier {
				t.Fatalf("read back %+v, want %+v", back, tc.b)
			}
		})
	}
	var b Billing
	if err := json.Unmarshal([]byte(`{"billable":true,"reason":"valid_vhs","rate":0.505}`), &b); !errors.Is(err, ErrBadAmount) {
		t.Fatalf("a rate of 0.505 dollars read as %+v, %v", b, err)
	}
}

// TestRatesMustBeAmounts: a negative or absurd configured rate is refused
// at start.
func TestRatesMustBeAmounts(t *testing.T) {
	st, _ := newTestService(t, t0)
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"negative single", func(c *Config) { c.Rates[TierStarter] = Rate{Single: -1, Session: 350} }},
		{"session above MaxCents", func(c *Config) { c.Rates[TierPaygo] = Rate{Single: 300, Session: MaxCents + 1} }},
		{"negative USG", func(c *Config) { c.USGRate = -50 }},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		if _, err := New(Deps{Repos: st.Repos()}, cfg); !errors.Is(err, ErrBadAmount) {
			t.Errorf("%s: %v, want ErrBadAmount", tc.name, err)
		}
	}
}
