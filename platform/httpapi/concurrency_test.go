package httpapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentMixedLoad: 20 clients send 50 mixed requests each (USG
// valid and invalid, cardiac single with every result code, batches,
// health) over 4 keys. Afterwards the ledger holds exactly the billed
// responses, per customer, and monthly_usage from the ledger agrees with
// the highest monthly_usage any response reported.
func TestConcurrentMixedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 requests")
	}
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	ctx := context.Background()
	keys := []string{a.key}
	for i := 1; i < 4; i++ {
		k, _, err := a.svc.Accounts.CreateKey(ctx, fmt.Sprintf("clinic-%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	customers := []string{"clinic-a", "clinic-1", "clinic-2", "clinic-3"}
	imgs := make([]string, 8)
	for c := range imgs {
		imgs[c] = b64(grayPNG(t, uint8(c), 64, 64))
	}
	var mu sync.Mutex
	billed := make([]int, 4)
	maxUsage := make([]int, 4)
	var wg sync.WaitGroup
	for cl := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := cl % 4
			for i := range 50 {
				var path string
				var body any
				switch i % 5 {
				case 0, 1:
					path, body = "/usg/v1/predict", usgValid
				case 2:
					path, body = "/usg/v1/predict", `{"BUN": 27}`
				case 3:
					path, body = "/v3/predict", map[string]any{"image": imgs[(cl+i)%8]}
				case 4:
					if i%2 == 0 {
						path, body = "/v3/predict", map[string]any{"images": []string{imgs[(cl+i)%8], imgs[(cl+i+1)%8]}}
					} else {
						path = "/v3/health"
					}
				}
				method := "POST"
				if path == "/v3/health" {
					method = "GET"
				}
				resp, b := a.do(method, path, keys[k], body)
				isBilled, usage := false, 0
				switch {
				case path == "/usg/v1/predict" && resp.StatusCode == 200:
					isBilled = true
				case path == "/v3/predict":
					if resp.StatusCode != 200 {
						t.Errorf("%s: %d %s", path, resp.StatusCode, b)
						continue
					}
					bl := obj(t, b)["billing"].(map[string]any)
					isBilled = bl["billable"] == true
					usage = int(bl["monthly_usage"].(float64))
				}
				mu.Lock()
				if isBilled {
					billed[k]++
				}
				maxUsage[k] = max(maxUsage[k], usage)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	evs, err := a.svc.Repos().Ledger.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, c := range customers {
		total += billed[k]
		n, err := a.svc.Accounts.MonthlyUsage(ctx, c)
		if err != nil || n != billed[k] || maxUsage[k] > n {
			t.Errorf("%s: monthly_usage %d (%v), billed responses %d, highest reported %d", c, n, err, billed[k], maxUsage[k])
		}
	}
	if len(evs) != total || total == 0 {
		t.Fatalf("ledger %d events, %d billed responses", len(evs), total)
	}
	seen := map[uint64]bool{}
	for _, e := range evs {
		if seen[e.Seq] {
			t.Fatalf("duplicate seq %d", e.Seq)
		}
		seen[e.Seq] = true
	}
	if err := a.store.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d billed", 20*50, total)
}
