package httpapi

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"vetlens/internal/dicomtest"
)

// peakRSS is the process's peak resident set size since the last
// resetPeakRSS (VmHWM in /proc/self/status; Linux), or 0.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS sets VmHWM back to the current RSS (clear_refs 5, Linux
// 4.0 and later); false where it cannot.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// TestDeflateBombsKeepMemoryBounded replays issue 46's deflate bomb: 8
// clients at once send /v3/predict a 300 MiB private OB element deflated
// to about 300 KB (the deflated explicit VR transfer syntax). Each is
// refused with 413, and the server never holds the inflated element: the
// peak RSS (VmHWM, reset before the burst, so it is the kernel's own peak
// rather than a sample) grows by under 200 MB, RSS right after the burst
// is within 200 MB of idle, and the heap allocated during the whole burst
// (TotalAlloc) stays under 200 MB. Before the fix each request inflated up
// to 256 MiB into a growing buffer while checking the header: about 0.9
// GB of peak RSS per concurrent request.
func TestDeflateBombsKeepMemoryBounded(t *testing.T) {
	if rss() == 0 || peakRSS() == 0 || !resetPeakRSS() {
		t.Skip("no /proc/self/status VmHWM or clear_refs")
	}
	const clients, bombBytes, bound = 8, 300 << 20, 200 << 20
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	bomb := dicomtest.DeflateBomb(t, bombBytes)
	body := `{"image":"` + b64(bomb) + `"}`
	bomb = nil
	if resp, b := a.do("POST", "/v3/predict", a.key, body); resp.StatusCode != 413 {
		t.Fatalf("warm-up: %d %s, want 413", resp.StatusCode, b)
	}
	runtime.GC()
	idle := rss()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resetPeakRSS()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	counts := burst(ctx, a, "/v3/predict", body, clients)
	peak, now := peakRSS(), rss()
	runtime.ReadMemStats(&after)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d clients x %d MiB bomb (%d KB on the wire): statuses %v", clients, bombBytes>>20, len(body)>>10, counts)
	t.Logf("RSS idle %d MB, peak %d MB (+%d MB), after the burst %d MB (+%d MB); heap allocated during the burst %d MB",
		idle>>20, peak>>20, (peak-idle)>>20, now>>20, (now-idle)>>20, allocated>>20)
	if counts[413] != clients {
		t.Errorf("statuses %v, want %d x 413", counts, clients)
	}
	if peak-idle > bound {
		t.Errorf("peak RSS grew by %d MB, over %d MB", (peak-idle)>>20, bound>>20)
	}
	if now-idle > bound {
		t.Errorf("RSS after the burst %d MB over idle, over %d MB", (now-idle)>>20, bound>>20)
	}
	if allocated > bound {
		t.Errorf("the burst allocated %d MB, over %d MB", allocated>>20, bound>>20)
	}
}
