package api

// Billing is the spec's billing object as it goes on the wire: the rate
// in dollars. The use cases keep billing as values (app.Billing, whole
// cents); NewBilling turns one into this body.
type Billing struct {
	Billable     bool     `json:"billable"`
	Reason       string   `json:"reason"`
	CallType     string   `json:"call_type,omitempty"`
	MonthlyUsage *int     `json:"monthly_usage,omitempty"`
	Tier         string   `json:"tier,omitempty"`
	Rate         *float64 `json:"rate,omitempty"`
}

// NewBilling is the billing object of a metered call: rateCents (nil
// unless billable) is written as dollars, the nearest float64 to the
// decimal amount (250 cents is 2.5).
func NewBilling(billable bool, reason, callType string, monthlyUsage *int, tier string, rateCents *int64) Billing {
	b := Billing{Billable: billable, Reason: reason, CallType: callType, MonthlyUsage: monthlyUsage, Tier: tier}
	if rateCents != nil {
		d := float64(*rateCents) / 100
		b.Rate = &d
	}
	return b
}
