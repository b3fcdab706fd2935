package httpapi

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/capture"
)

// rss is the process's resident set size in bytes (Linux; 0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// screenPNG is a w x h grey PNG of a bright rectangle on a dark ground:
// large decoded, a few KB encoded.
func screenPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+w]
		for x := range row {
			if x > w/5 && x < 4*w/5 && y > h/5 && y < 4*h/5 {
				row[x] = 190
			} else {
				row[x] = 20
			}
		}
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAttackCornersRSS replays issue 13's decode attack on /v3/corners
// with the real PoP pipeline (OpenCV): concurrent compressible PNGs, each
// decoded to many megapixels. Peak RSS growth stays within the pixel
// budget (plus a fixed allowance for the request bodies and the runtime),
// and RSS falls back near idle once the burst is over. The default sizes
// are small for `make test`, where the budget's accounting is enforced and
// the RSS figures are logged; VETLENS_ATTACK_FULL=1 runs the 16
// clients x 40 MP with the budget sized from the machine and enforces the
// RSS bounds too.
func TestAttackCornersRSS(t *testing.T) {
	if rss() == 0 {
		t.Skip("no /proc/self/statm")
	}
	w, h, clients, budget := 4000, 2000, 8, int64(160<<20) // 8 MP: 64 MB reserved each, 2 at a time
	if os.Getenv("VETLENS_ATTACK_FULL") != "" {
		w, h, clients, budget = 7280, 5450, 16, 0 // 39.7 MP, the budget sized from the machine
	}
	const slack = 96 << 20 // request bodies, TLS buffers, goroutines, allocator rounding
	mgr := capture.NewManager(capture.DefaultConfig(), nil, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{pipeline: capture.NewService(mgr, nil, capture.PoP{}), appCfg: func(c *app.Config) {
		c.PixelBudget, c.PixelWait = budget, 60*time.Second
	}})
	body := `{"image":"` + b64(screenPNG(t, w, h)) + `"}`
	small := `{"image":"` + b64(screenPNG(t, 640, 480)) + `"}`
	if resp, b := a.do("POST", "/v3/corners", a.key, small); resp.StatusCode != 200 && resp.StatusCode != 422 {
		t.Fatalf("warm-up: %d %s", resp.StatusCode, b)
	}
	capacity := a.svc.Status.PixelStats().Capacity
	time.Sleep(time.Second) // the warm-up's trim
	idle := rss()

	var peak atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			if r := rss(); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	counts := burst(ctx, a, "/v3/corners", body, clients)
	took := time.Since(start)
	// After the burst the budget returns memory to the OS (TrimDelay).
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	sampler.Wait()
	after := rss()
	st := a.svc.Status.PixelStats()
	t.Logf("%d clients x %dx%d (%.1f MP, %d KB of base64) in %v: statuses %v", clients, w, h, float64(w*h)/1e6, len(body)>>10, took, counts)
	t.Logf("budget %d MB: peak reserved %d MB, %d reservations, %d waited, %d trims", capacity>>20, st.Peak>>20, st.Reservations, st.Waited, st.Trims)
	t.Logf("RSS idle %d MB, peak %d MB (+%d MB), after the burst %d MB (+%d MB)", idle>>20, peak.Load()>>20, (peak.Load()-idle)>>20, after>>20, (after-idle)>>20)
	if counts[200]+counts[422] != clients {
		t.Fatalf("statuses %v: want every request answered (200 or 422)", counts)
	}
	if st.Peak > capacity {
		t.Fatalf("reserved %d bytes at once, over the budget %d", st.Peak, capacity)
	}
	// RSS is the process's, not the budget's: at the small default sizes
	// the C allocator's arenas and the runtime's timing move it by about
	// 100 MB between identical runs (peak +237 to +295 MB, after the burst
	// +13 to +112 MB over 160 MB of pixels, seen on this 2-core machine),
	// so the RSS bounds fail the test only in the full run, where the
	// pixels dominate; the budget's own accounting above is exact and
	// always enforced.
	strict := os.Getenv("VETLENS_ATTACK_FULL") != ""
	check := t.Logf
	if strict {
		check = t.Fatalf
	}
	if grow := peak.Load() - idle; grow > capacity+slack {
		check("peak RSS grew by %d MB, over the budget %d MB + %d MB", grow>>20, capacity>>20, slack>>20)
	}
	if grow := after - idle; grow > min(200<<20, capacity/2) {
		check("RSS %d MB above idle after the burst", grow>>20)
	}
}

// burst sends body to path from clients goroutines at once with a's key
// and counts the statuses (-1: no response).
func burst(ctx context.Context, a *api, path, body string, clients int) map[int]int {
	var wg sync.WaitGroup
	statuses := make(chan int, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "POST", a.srv.URL+path, strings.NewReader(body))
			req.Header.Set("x-api-key", a.key)
			resp, err := a.client.Do(req)
			if err != nil {
				statuses <- -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	return counts
}
