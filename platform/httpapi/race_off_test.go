//go:build !race

package httpapi

// raceSlowdown is 1 without the race detector (race_on_test.go).
const raceSlowdown = 1
