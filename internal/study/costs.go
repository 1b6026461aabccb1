package study

// Costs are what a study's answers cost: the pay per hour of a
// participant's time (in Currency; 0: not set) and the seconds one
// question takes, the fallback before the study's own response times
// measure it.
type Costs struct {
	PayPerHour         float64
	Currency           string
	SecondsPerQuestion float64
}

// DefaultCosts: no pay rate set, 8 s a question (about the median
// response time of the demo's triplets, with the reading of the
// instructions spread over the questions).
func DefaultCosts() Costs { return Costs{Currency: "USD", SecondsPerQuestion: 8} }

// Valid reports whether c fits the store's bounds.
func (c Costs) Valid() bool {
	return c.PayPerHour >= 0 && c.PayPerHour <= 10000 && len(c.Currency) >= 1 && len(c.Currency) <= 8 &&
		c.SecondsPerQuestion > 0 && c.SecondsPerQuestion <= 3600
}
