//go:build matprofile

package httpapi

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"testing"
	"time"

	"gocv.io/x/gocv"

	"vetlens/app/capture"
)

// corruptPNGs are n PNGs whose signature and IHDR (size within limits)
// pass the app's header check but whose pixel data is broken, so they
// reach OpenCV's decoder and fail there.
func corruptPNGs(t *testing.T, n int) [][]byte {
	t.Helper()
	out := make([][]byte, 0, n)
	for i := range n {
		img := image.NewRGBA(image.Rect(0, 0, 64+i, 48))
		for p := range img.Pix {
			img.Pix[p] = uint8(p*7 + i)
		}
		img.Set(0, 0, color.RGBA{1, 2, 3, 255})
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		raw := b.Bytes()
		// Keep the signature and IHDR (8 + 25 bytes) and a few bytes of
		// IDAT, then garbage or nothing.
		cut := 33 + 20
		bad := append([]byte(nil), raw[:cut]...)
		if i%2 == 1 {
			bad = append(bad, bytes.Repeat([]byte{0xa5}, 64)...)
		}
		out = append(out, bad)
	}
	return out
}

// TestCornersCorruptPNGNoMatLeak: corrupt PNGs sent to /v3/corners (and
// /v3/rectify) through the real HTTP server on loopback are refused with
// 400, and every Mat the PoP service made for them is closed. Before the
// fix each one leaked the empty Mat pop.DecodeFrame returns with its error.
// Run with -tags matprofile (make test-leaks does).
func TestCornersCorruptPNGNoMatLeak(t *testing.T) {
	mgr := capture.NewManager(capture.DefaultConfig(), fakeCardiac{}, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pipeline: capture.NewService(mgr, fakeCardiac{}, capture.PoP{})})
	addr := serveReal(t, a)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, // the test's own certificate
	}}
	defer client.CloseIdleConnections()
	post := func(path string, body map[string]any) (int, []byte) {
		t.Helper()
		j, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest("POST", "https://"+addr+path, bytes.NewReader(j))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", a.key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}

	// A good frame first, so the pipeline's one-time allocations are
	// made before counting.
	if code, b := post("/v3/corners", map[string]any{"image": base64.StdEncoding.EncodeToString(grayPNG(t, 90, 640, 480))}); code != 422 {
		t.Fatalf("blank frame: %d %s", code, b)
	}
	before := gocv.MatProfile.Count()
	bad := corruptPNGs(t, 10)
	for i, png := range bad {
		img := base64.StdEncoding.EncodeToString(png)
		if code, b := post("/v3/corners", map[string]any{"image": img}); code != 400 {
			t.Fatalf("corrupt PNG %d on /v3/corners: %d %s, want 400", i, code, b)
		}
		corners := [][2]float64{{1, 1}, {60, 1}, {60, 40}, {1, 40}}
		if code, b := post("/v3/rectify", map[string]any{"image": img, "corners": corners}); code != 400 {
			t.Fatalf("corrupt PNG %d on /v3/rectify: %d %s, want 400", i, code, b)
		}
	}
	if n := gocv.MatProfile.Count() - before; n != 0 {
		t.Fatalf("%d Mats leaked by %d corrupt PNGs", n, 2*len(bad))
	}
}
