package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"vetlens/engine/testmodels"
)

// TestGuardStepsBothSpecs runs the steps every keyed route shares (the
// key, the per-key in-flight limit, the bounded body and its read
// timeout) against one cardiac route and the USG predict route, and
// checks each spec's answer to the byte: the status, Retry-After, the
// Content-Type and the whole body ({"error": msg} for cardiac-v3,
// {"error": {code, message}} for usg-v1). A missing key is 403 on cardiac
// and 401 missing_api_key on USG; everything else differs only in the
// body's shape.
func TestGuardStepsBothSpecs(t *testing.T) {
	started := make(chan struct{}, 1)
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{started: started}, pop: &fakePoP{sessions: map[string]*fakeSession{}},
		cfg: Config{MaxInFlightPerKey: 1, BodyReadBase: 300 * time.Millisecond, MinBodyRate: 1 << 40}})
	within := fmt.Sprint(a.h.bodyReadTimeout(MaxSmallBody))
	cardiacErr := func(msg string) string { return `{"error":"` + msg + `"}` + "\n" }
	usgErr := func(code, msg string) string {
		return `{"error":{"code":"` + code + `","message":"` + msg + `"}}` + "\n"
	}
	type answer struct {
		status     int
		retryAfter string
		body       string
	}
	type spec struct{ cardiac, usg answer }
	const limit = "too many requests in flight for this API key (limit 1)"
	tooLarge := fmt.Sprintf("request body exceeds %d bytes", MaxSmallBody)
	steps := []struct {
		name string
		key  string // "ok": the customer's key
		body string
		// slow sends body and then nothing more; hold runs the request
		// while another of the key's requests holds its one slot.
		slow, hold bool
		want       spec
	}{
		{name: "missing key", body: "{}", want: spec{
			cardiac: answer{403, "", cardiacErr("invalid or missing API key")},
			usg:     answer{401, "", usgErr("missing_api_key", "x-api-key header is required")}}},
		{name: "bad key", key: "vl_00000000_nope", body: "{}", want: spec{
			cardiac: answer{403, "", cardiacErr("invalid or missing API key")},
			usg:     answer{403, "", usgErr("invalid_api_key", "API key is not active")}}},
		{name: "in-flight limit", key: "ok", body: "{}", hold: true, want: spec{
			cardiac: answer{429, "1", cardiacErr(limit)},
			usg:     answer{429, "1", usgErr("rate_limited", limit)}}},
		{name: "too large", key: "ok", body: `{"x":"` + strings.Repeat("a", MaxSmallBody) + `"}`, want: spec{
			cardiac: answer{413, "", cardiacErr(tooLarge)},
			usg:     answer{413, "", usgErr("payload_too_large", tooLarge)}}},
		{name: "slow body", key: "ok", body: "{", slow: true, want: spec{
			cardiac: answer{408, "", cardiacErr("request body not received within " + within)},
			usg:     answer{408, "", usgErr("request_timeout", "request body not received within "+within)}}},
	}
	routes := []struct {
		name, path string
		want       func(spec) answer
	}{
		{"cardiac", "/v3/pop-session/start", func(s spec) answer { return s.cardiac }},
		{"usg", "/usg/v1/predict", func(s spec) answer { return s.usg }},
	}
	for _, rt := range routes {
		for _, st := range steps {
			t.Run(rt.name+"/"+st.name, func(t *testing.T) {
				if rt.name == "usg" && testmodels.USG(t) == nil {
					t.Skip("no USG model")
				}
				if st.hold {
					release := a.holdSlot(t, started)
					defer release()
				}
				key := st.key
				if key == "ok" {
					key = a.key
				}
				var body io.Reader = strings.NewReader(st.body)
				if st.slow {
					pr, pw := io.Pipe()
					defer pw.Close()
					go pw.Write([]byte(st.body)) // and nothing more
					body = pr
				}
				req, err := http.NewRequest("POST", a.srv.URL+rt.path, body)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("x-api-key", key)
				}
				resp, err := a.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				want := rt.want(st.want)
				got := answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
				if got != want {
					t.Fatalf("got %d Retry-After %q %q\nwant %d Retry-After %q %q",
						got.status, got.retryAfter, got.body, want.status, want.retryAfter, want.body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if rt.name == "usg" {
					checkCORS(t, resp)
				}
			})
		}
	}
}

// holdSlot starts a prediction that holds one of the key's in-flight
// slots (a fakeCardiac image of gray 200 blocks until its request ends)
// and returns once it does; release ends it and waits for the slot.
func (a *api) holdSlot(t *testing.T, started chan struct{}) (release func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		resp := a.stream(ctx, map[string]any{"images": []string{b64(grayPNG(t, 200, 64, 64))}})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	<-started
	return func() {
		cancel()
		wg.Wait()
		a.idle()
	}
}

// errReader fails every read: a body that cannot be read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestGuardRecoversAndRefusesUnreadableBodies runs the guard's answers
// that a client cannot provoke over the wire on both specs' errors: a
// handler's panic (500 in the spec's words; http.ErrAbortHandler passes
// through) and a body that cannot be read (400; usg-v1: invalid_json).
// A request that passes reaches the handler with its caller, its
// received time and its body.
func TestGuardRecoversAndRefusesUnreadableBodies(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	specs := []struct {
		name                 string
		errs                 specErrors
		internal, unreadable string
		internalSt, unreadSt int
	}{
		{"cardiac", v3Errors{}, `{"error":"internal server error"}`, `{"error":"could not read request body"}`, 500, 400},
		{"usg", usgErrors{},
			`{"error":{"code":"internal_error","message":"internal error"}}`,
			`{"error":{"code":"invalid_json","message":"could not read request body"}}`, 500, 400},
	}
	serve := func(h http.Handler, body io.Reader) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/", body)
		r.Header.Set("x-api-key", a.key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, sp := range specs {
		t.Run(sp.name, func(t *testing.T) {
			before := time.Now()
			ok := a.h.guard(sp.errs, MaxSmallBody, true, func(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
				if _, has := ctx.Deadline(); !has || req.caller.Customer != "clinic-a" || req.received.Before(before) || string(req.body) != "{}" {
					t.Errorf("handler got deadline %v, caller %+v, received %v, body %q", has, req.caller, req.received, req.body)
				}
				w.WriteHeader(http.StatusNoContent)
			})
			if w := serve(ok, strings.NewReader("{}")); w.Code != http.StatusNoContent {
				t.Fatalf("a request that passes: %d %s", w.Code, w.Body)
			}
			panics := a.h.guard(sp.errs, MaxSmallBody, true, func(context.Context, http.ResponseWriter, *keyedRequest) { panic("boom") })
			if w := serve(panics, strings.NewReader("{}")); w.Code != sp.internalSt || w.Body.String() != sp.internal+"\n" {
				t.Errorf("panic: %d %s", w.Code, w.Body)
			}
			if w := serve(ok, errReader{}); w.Code != sp.unreadSt || w.Body.String() != sp.unreadable+"\n" {
				t.Errorf("unreadable body: %d %s", w.Code, w.Body)
			}
			aborts := a.h.guard(sp.errs, 0, true, func(context.Context, http.ResponseWriter, *keyedRequest) { panic(http.ErrAbortHandler) })
			func() {
				defer func() {
					if p := recover(); p != http.ErrAbortHandler {
						t.Errorf("ErrAbortHandler: recovered %v", p)
					}
				}()
				serve(aborts, nil)
			}()
			a.idle() // every slot given back
		})
	}
}
