// Command apiload is the LAN API load benchmark: it starts the API
// in-process over TLS on loopback (real engines, a temporary data dir),
// sends requests from C concurrent clients and reports latency
// percentiles, throughput and the process's peak RSS.
//
//	go run ./bench/apiload -models models -clients 8 -n 4000            # USG
//	go run ./bench/apiload -models models -mode cardiac -clients 1 -n 50 -image engine/cardiac/testdata/phantoms/phantom_3_1024x1024.jpg
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/ort"
	"vetlens/engine/usg/usgort"
	"vetlens/internal/config"
	"vetlens/platform/httpapi"
	"vetlens/platform/store"
)

func main() {
	models := flag.String("models", "models", "models directory")
	mode := flag.String("mode", "usg", "usg or cardiac")
	clients := flag.Int("clients", 8, "concurrent clients")
	n := flag.Int("n", 4000, "requests in total")
	warm := flag.Int("warmup", 50, "warm-up requests (not measured)")
	imagePath := flag.String("image", "", "cardiac: image file to send")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured phase to this file")
	flag.Parse()
	profile = *cpuprofile
	if err := run(*models, *mode, *clients, *n, *warm, *imagePath); err != nil {
		fmt.Fprintln(os.Stderr, "apiload:", err)
		os.Exit(1)
	}
}

func run(models, mode string, clients, n, warm int, imagePath string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "apiload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(dir, time.Second)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := ort.Init("", config.ORTLibraryCandidates()...); err != nil {
		return err
	}
	deps := app.Deps{Repos: st.Repos()}
	var path string
	var body []byte
	switch mode {
	case "usg":
		e, err := usgort.Load(models)
		if err != nil {
			return err
		}
		deps.USG = e
		path = "/usg/v1/predict"
		body = []byte(`{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14, "clinic_code": "bench"}`)
	case "cardiac":
		e, err := cardiacort.Load(models, cardiac.DefaultOptions())
		if err != nil {
			return err
		}
		deps.Cardiac = e
		img, err := os.ReadFile(imagePath)
		if err != nil {
			return err
		}
		path = "/v3/predict"
		body, _ = json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(img)})
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	svc, err := app.New(deps, app.DefaultConfig())
	if err != nil {
		return err
	}
	key, _, err := svc.Accounts.CreateKey(ctx, "bench", "")
	if err != nil {
		return err
	}
	srv := httptest.NewUnstartedServer(httpapi.New(svc, httpapi.Config{MaxInFlightPerKey: clients + 1}))
	srv.EnableHTTP2 = false
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = clients

	do := func() (time.Duration, error) {
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(t0), nil
	}
	for range warm {
		if _, err := do(); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				d, err := do()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	if firstErr != nil {
		return firstErr
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	fmt.Printf("mode=%s clients=%d requests=%d\n", mode, clients, len(lat))
	fmt.Printf("p50=%.2fms p90=%.2fms p99=%.2fms max=%.2fms\n", ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(lat[len(lat)-1]))
	fmt.Printf("throughput=%.1f req/s\n", float64(len(lat))/wall.Seconds())
	fmt.Printf("peak_rss=%s\n", peakRSS())
	evs, _ := st.Ledger().Events(ctx)
	fmt.Printf("ledger_events=%d\n", len(evs))
	return nil
}

// profile is the -cpuprofile path.
var profile string

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peakRSS is VmHWM from /proc/self/status.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
