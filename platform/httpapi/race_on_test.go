//go:build race

package httpapi

// raceSlowdown is how many times slower the race detector makes the
// server's own work (encoding, TLS): wall-clock bounds in tests that
// stand for "fast enough" are scaled by it.
const raceSlowdown = 10
