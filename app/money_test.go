package app

import (
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
