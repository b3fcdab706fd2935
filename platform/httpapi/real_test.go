package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"vetlens/engine/testmodels"
)

var phantoms = filepath.Join("..", "..", "engine", "cardiac", "testdata", "phantoms")

// TestV3PredictRealModels runs single, batch and stream predictions on the
// shipped cardiac models (skipped until models/manifest.json lists them)
// and checks that billing follows the result codes.
func TestV3PredictRealModels(t *testing.T) {
	eng := testmodels.Cardiac(t)
	a := newAPI(t, apiOpts{cardiac: eng})
	img1 := b64(fileBytes(t, filepath.Join(phantoms, "xraysim_1_640x480.png")))
	img2 := b64(fileBytes(t, filepath.Join(phantoms, "xraysim_3_1024x1024.jpg")))
	billed := 0
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": img1, "render": true, "uuid": "rex"})
	m := obj(t, b)
	if resp.StatusCode != 200 || m["model_version"] != eng.ModelVersion() {
		t.Fatalf("single %d %s", resp.StatusCode, b)
	}
	code := int(m["result_code"].(float64))
	t.Logf("single: result_code %d", code)
	bl := m["billing"].(map[string]any)
	if (code >= 1 && code <= 4) != (bl["billable"] == true) {
		t.Fatalf("code %d billing %v", code, bl)
	}
	if bl["billable"] == true {
		billed++
		if m["rendered_image"] == "" || len(m["prediction"].([]any)) != 7 {
			t.Errorf("single body %.300s", b)
		}
	}
	resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"images": []string{img1, img2}})
	m = obj(t, b)
	if resp.StatusCode != 200 || len(m["per_photo"].([]any)) != 2 || m["n_photos_processed"] != 2.0 {
		t.Fatalf("batch %d %.500s", resp.StatusCode, b)
	}
	if bl := m["billing"].(map[string]any); (m["n_photos_with_landmarks"].(float64) > 0) != (bl["billable"] == true) {
		t.Fatalf("batch billing %v with %v photos with landmarks", bl, m["n_photos_with_landmarks"])
	} else if bl["billable"] == true {
		billed++
	}
	sresp := a.stream(context.Background(), map[string]any{"images": []string{img1, img2}})
	evs, _ := readSSE(t, sresp)
	sresp.Body.Close()
	if len(evs) != 5 || evs[0].name != "processing_started" || evs[3].name != "summary" || evs[4].name != "billing" {
		t.Fatalf("stream events %v", evs)
	}
	if evs[4].data["billable"] == true {
		billed++
	}
	// Colour noise is not a radiograph: when the validity model rejects
	// it, the body is exactly the rejection shape and nothing is billed.
	resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(noisePNG(t, 320, 240)), "uuid": "rex"})
	m = obj(t, b)
	if resp.StatusCode != 200 {
		t.Fatalf("noise: %d %s", resp.StatusCode, b)
	}
	if m["result_code"] == 6.0 {
		if len(m) != 9 || m["rejected"] != true || m["billing"].(map[string]any)["billable"] != false {
			t.Errorf("rejection body %s", b)
		}
	} else {
		t.Logf("colour noise not rejected (code %v)", m["result_code"])
	}
	if n, _ := a.svc.Accounts.MonthlyUsage(context.Background(), "clinic-a"); n != billed {
		t.Fatalf("ledger %d, billed responses %d", n, billed)
	}
}

// noisePNG is w x h random colour noise.
func noisePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestConcurrentRealCardiac: 20 clients x 50 requests on the real engines
// (2 cardiac single/batch predictions per client among USG calls);
// the ledger equals the billed responses and monthly_usage agrees.
func TestConcurrentRealCardiac(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 requests with real cardiac predictions")
	}
	eng := testmodels.Cardiac(t)
	a := newAPI(t, apiOpts{cardiac: eng})
	img := b64(fileBytes(t, filepath.Join(phantoms, "xraysim_2_480x720.jpg")))
	var mu sync.Mutex
	billed, maxUsage := 0, 0
	var wg sync.WaitGroup
	for cl := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				var resp *http.Response
				var b []byte
				switch {
				case i == 10:
					resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": img})
				case i == 30:
					resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"images": []string{img, img}, "uuid": fmt.Sprintf("dog-%d", cl)})
				case i%3 == 0:
					resp, b = a.do("POST", "/usg/v1/predict", a.key, `{"BUN": 1}`)
				default:
					resp, b = a.do("POST", "/usg/v1/predict", a.key, usgValid)
				}
				mu.Lock()
				switch {
				case resp.Request.URL.Path == "/usg/v1/predict":
					if resp.StatusCode == 200 {
						billed++
					}
				case resp.StatusCode != 200:
					t.Errorf("cardiac %d %s", resp.StatusCode, b)
				default:
					bl := obj(t, b)["billing"].(map[string]any)
					if bl["billable"] == true {
						billed++
					}
					maxUsage = max(maxUsage, int(bl["monthly_usage"].(float64)))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	evs, _ := a.svc.Repos().Ledger.Events(context.Background())
	n, _ := a.svc.Accounts.MonthlyUsage(context.Background(), "clinic-a")
	if len(evs) != billed || n != billed || maxUsage > n {
		t.Fatalf("ledger %d, monthly_usage %d, billed responses %d, highest reported %d", len(evs), n, billed, maxUsage)
	}
	t.Logf("%d billed of 1000", billed)
}
