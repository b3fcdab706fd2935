package app

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Cents is an amount of money in US cents. Every price, charge and
// ledger amount is a whole number of cents, so sums are exact; dollars
// appear only at the edges: the spec's billing object carries the rate as
// a number of dollars (api.Billing, api.NewBilling), String writes dollars for people,
// and ParseDollars reads them from flags.
type Cents int64

// MaxCents is the largest amount ParseDollars and CentsFromDollars
// accept: $1,000,000, far above any per-call price and small enough that
// a month of calls cannot overflow a sum, and that its dollars are exact
// in a float64.
const MaxCents Cents = 100_000_000

// Dollars is c in dollars, the nearest float64 to the decimal amount (so
// JSON writes 2.5 for 250 cents).
func (c Cents) Dollars() float64 { return float64(c) / 100 }

// String writes c as dollars with two decimals: "$2.50", "-$0.05".
func (c Cents) String() string {
	sign, v := "", int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s$%d.%02d", sign, v/100, v%100)
}

// ErrBadAmount: a dollar amount that is not a whole number of cents from
// 0 to MaxCents.
var ErrBadAmount = errors.New("amount must be dollars with at most 2 decimals, from 0 to 1000000")

// ParseDollars reads a dollar amount written as decimal text, "2.50",
// "2.5", "3", "$0.50", exactly (no float rounding). More than two
// decimals, a sign, exponents and amounts above MaxCents are
// ErrBadAmount.
func ParseDollars(s string) (Cents, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "$")
	whole, frac, dot := strings.Cut(t, ".")
	if whole == "" && frac == "" || len(frac) > 2 || dot && frac == "" || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%q: %w", s, ErrBadAmount)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	if whole == "" {
		whole = "0"
	}
	if len(whole) > 7 {
		return 0, fmt.Errorf("%q: %w", s, ErrBadAmount)
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || Cents(w*100+f) > MaxCents {
		return 0, fmt.Errorf("%q: %w", s, ErrBadAmount)
	}
	return Cents(w*100 + f), nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// CentsFromDollars converts a dollar amount read as a number (JSON) to
// cents: it must be within a millionth of a cent of a whole number of
// cents (2.5 and 0.1 are; 0.505 is not), from 0 to MaxCents.
func CentsFromDollars(d float64) (Cents, error) {
	c := math.Round(d * 100)
	if math.IsNaN(d) || c < 0 || c > float64(MaxCents) || math.Abs(d*100-c) > 1e-6 {
		return 0, fmt.Errorf("%v: %w", d, ErrBadAmount)
	}
	return Cents(c), nil
}
