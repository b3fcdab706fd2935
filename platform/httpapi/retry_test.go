package httpapi

import (
	"context"
	"image"
	"net/http"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/testmodels"
	"vetlens/engine/usg"
)

// failingCardiac answers every prediction with err.
type failingCardiac struct {
	fakeCardiac
	err error
}

func (f failingCardiac) Predict(context.Context, image.Image, cardiac.PredictOptions) (*cardiac.Result, error) {
	return nil, f.err
}

// failingUSG answers every prediction with err (the shipped models give
// its version and health).
type failingUSG struct {
	app.USGEngine
	err error
}

func (f failingUSG) Predict(context.Context, *usg.Request) (*usg.Response, error) { return nil, f.err }

// TestRetryAfter: both specs' endpoints send one Retry-After rule, whole
// seconds rounded up and at least 1 (the USG endpoint truncated before:
// 500 ms was "0", retry at once). The v3 endpoint is refused busy (503,
// the pixel budget's kind), the USG one with the disk full (507).
func TestRetryAfter(t *testing.T) {
	waits := []struct {
		wait time.Duration
		want string
	}{
		{time.Nanosecond, "1"},
		{500 * time.Millisecond, "1"},
		{time.Second, "1"},
		{1500 * time.Millisecond, "2"},
		{2 * time.Second, "2"},
		{60 * time.Second, "60"},
	}
	img := b64(grayPNG(t, 1, 64, 64))
	usgBody := map[string]any{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14}
	for _, ep := range []struct {
		name, path string
		body       any
		status     int
		opts       func(error) apiOpts
	}{
		{"cardiac v3", "/v3/predict", map[string]any{"image": img}, http.StatusServiceUnavailable,
			func(err error) apiOpts { return apiOpts{cardiac: failingCardiac{err: err}} }},
		{"usg v1", "/usg/v1/predict", usgBody, http.StatusInsufficientStorage,
			func(err error) apiOpts { return apiOpts{usg: failingUSG{testmodels.USG(t), err}} }},
	} {
		for _, w := range waits {
			t.Run(ep.name+"/"+w.wait.String(), func(t *testing.T) {
				kind := app.KindBusy
				if ep.status == http.StatusInsufficientStorage {
					kind = app.KindNoSpace
				}
				a := newAPI(t, ep.opts(&app.Error{Kind: kind, Msg: "try later", RetryAfter: w.wait}))
				resp, b := a.do("POST", ep.path, a.key, ep.body)
				if resp.StatusCode != ep.status || resp.Header.Get("Retry-After") != w.want {
					t.Fatalf("%d, Retry-After %q; want %d, %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), ep.status, w.want, b)
				}
			})
		}
	}
}
