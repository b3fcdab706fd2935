package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/repo"
	"vetlens/internal/pgtest"
	"vetlens/platform/store/postgres"
)

// Environment of the server processes TestTwoServersOnePostgres starts.
const (
	twoServersDSNEnv = "VETLENS_TWO_SERVERS_DSN"
	twoServersDirEnv = "VETLENS_TWO_SERVERS_DIR"
)

// TestTwoServersChild is one `vetlens serve` process of
// TestTwoServersOnePostgres; it only runs when that test starts it.
func TestTwoServersChild(t *testing.T) {
	dsn := os.Getenv(twoServersDSNEnv)
	if dsn == "" {
		t.Skip("helper process for TestTwoServersOnePostgres")
	}
	os.Exit(Serve(context.Background(), []string{"--data-dir", os.Getenv(twoServersDirEnv), "--store", dsn,
		"--addr", "127.0.0.1:0", "--models", filepath.Join("..", "models")}, os.Stdout, os.Stderr))
}

// vetlensServer is a running server process.
type vetlensServer struct {
	cmd  *exec.Cmd
	addr string
}

func startServer(t *testing.T, dsn string) *vetlensServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoServersChild$")
	cmd.Env = append(os.Environ(), twoServersDSNEnv+"="+dsn, twoServersDirEnv+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "vetlens: serving https://"); ok {
			go io.Copy(io.Discard, out)
			return &vetlensServer{cmd: cmd, addr: a}
		}
	}
	cmd.Wait()
	t.Fatalf("server did not start: %s", stderr.String())
	return nil
}

// outcome is what one client request was answered.
type outcome struct {
	kind    string // usg, usg-bad, cardiac-pool, cardiac, cardiac-reject
	uuid    string
	status  int
	billing *struct {
		Billable     bool    `json:"billable"`
		Reason       string  `json:"reason"`
		CallType     string  `json:"call_type"`
		MonthlyUsage *int    `json:"monthly_usage"`
		Tier         string  `json:"tier"`
		Rate         float64 `json:"rate"`
	}
}

// billed reports whether the response says the call was billed: a USG
// 200 (USG responses carry no billing object) or a cardiac billing
// object with billable true.
func (o outcome) billed() bool {
	if strings.HasPrefix(o.kind, "usg") {
		return o.status == 200
	}
	return o.status == 200 && o.billing != nil && o.billing.Billable
}

// twoServerBodies are the request bodies of the burst.
type twoServerBodies struct{ radiograph, blank string }

func newBodies(t *testing.T) twoServerBodies {
	t.Helper()
	img, err := os.ReadFile(filepath.Join("..", "engine", "cardiac", "testdata", "phantoms", "xraysim_3_1024x1024.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	// A flat grey picture is no radiograph: result code 0, never billed.
	g := image.NewGray(image.Rect(0, 0, 320, 240))
	for i := range g.Pix {
		g.Pix[i] = 128
	}
	g.Set(3, 3, color.Gray{Y: 40})
	var buf bytes.Buffer
	if err := png.Encode(&buf, g); err != nil {
		t.Fatal(err)
	}
	return twoServerBodies{radiograph: base64.StdEncoding.EncodeToString(img), blank: base64.StdEncoding.EncodeToString(buf.Bytes())}
}

// request sends request i of client c to srv; pool is the number of
// patients whose cardiac calls share the 24-hour recheck.
func (b twoServerBodies) request(ctx context.Context, hc *http.Client, addr, key string, c, i, pool int) (outcome, error) {
	var (
		o          outcome
		path, body string
	)
	usgBody := func(uuid string) string {
		return `{"BUN":27,"CREATININE":1.2,"HGB":15.1,"ABSOLUTE LYMPHOCYTES":1435,"age_months":14,"uuid":"` + uuid + `"}`
	}
	switch i % 10 {
	case 5:
		o.kind, path, body = "usg-bad", "/usg/v1/predict", `{"BUN":"high"}`
	case 6:
		o.kind, o.uuid = "cardiac-pool", fmt.Sprintf("dog-%d", (c*7+i)%pool)
		path, body = "/v3/predict", `{"image":"`+b.radiograph+`","uuid":"`+o.uuid+`"}`
	case 7:
		o.kind, path, body = "cardiac", "/v3/predict", `{"image":"`+b.radiograph+`"}`
	case 8:
		o.kind, o.uuid = "cardiac-reject", fmt.Sprintf("stray-%d-%d", c, i)
		path, body = "/v3/predict", `{"image":"`+b.blank+`","uuid":"`+o.uuid+`"}`
	case 9:
		o.kind, path, body = "cardiac-batch", "/v3/predict", `{"images":["`+b.radiograph+`"]}`
	default:
		o.kind, o.uuid = "usg", fmt.Sprintf("cat-%d-%d", c, i)
		path, body = "/usg/v1/predict", usgBody(o.uuid)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", "https://"+addr+path, strings.NewReader(body))
	if err != nil {
		return o, err
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return o, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return o, err
	}
	o.status = resp.StatusCode
	if strings.HasPrefix(o.kind, "cardiac") && resp.StatusCode == 200 {
		var v struct {
			Billing json.RawMessage `json:"billing"`
		}
		if err := json.Unmarshal(data, &v); err != nil || v.Billing == nil {
			return o, fmt.Errorf("cardiac response without billing: %s", data)
		}
		if err := json.Unmarshal(v.Billing, &o.billing); err != nil {
			return o, err
		}
	}
	return o, nil
}

// TestTwoServersOnePostgres: two `vetlens serve` processes share one
// PostgreSQL database. 20 clients (10 on each server) each send 50 mixed
// requests for one customer: USG predictions (billed), bad USG requests
// (400, not billed), radiographs without a uuid (billed single), batches
// (billed session), radiographs for 10 shared patients (the first call per patient billed, the rest
// recheck_24h whichever server answers) and non-radiographs (not
// billed). The ledger then holds exactly the billed responses, ranks
// 1..N once each at the tier and rate of their rank. Then one server is
// killed with SIGKILL in the middle of a second burst: every
// acknowledged USG prediction is in the ledger.
func TestTwoServersOnePostgres(t *testing.T) {
	dsn := pgtest.NewSchema(t)
	ctx := context.Background()
	start := time.Now()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := app.New(app.Deps{Repos: st.Repos()}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := svc.Accounts.CreateKey(ctx, "group-clinic", "")
	if err != nil {
		t.Fatal(err)
	}
	servers := []*vetlensServer{startServer(t, dsn), startServer(t, dsn)}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 32}}
	bodies := newBodies(t)

	// One radiograph first: the burst's billing checks need it to be a
	// valid VHS (billed) with the shipped models.
	first, err := bodies.request(ctx, hc, servers[0].addr, key, 0, 7, 1)
	if err != nil || first.status != 200 || !first.billed() {
		if first.billing != nil {
			t.Logf("billing: %+v", *first.billing)
		}
		t.Fatalf("the test radiograph is not billed: %+v %v (are the cardiac models and ONNX Runtime installed? make deps)", first, err)
	}
	const clients, perClient, pool = 20, 50, 10
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = []outcome{first}
	)
	burst := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := servers[c%2]
			for i := 0; i < perClient; i++ {
				o, err := bodies.request(ctx, hc, srv.addr, key, c, i, pool)
				if err != nil {
					t.Errorf("client %d request %d: %v", c, i, err)
					return
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("burst: %d requests on two servers in %v", clients*perClient, time.Since(burst).Round(time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}
	evs, err := st.Repos().Ledger.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkLedger(t, evs)

	// Ledger entries equal billed responses, kind by kind.
	billed, poolBilled, poolRecheck := 0, map[string]int{}, 0
	for _, o := range outcomes {
		switch {
		case o.kind == "usg-bad" && o.status != 400:
			t.Errorf("bad USG request answered %d, want 400", o.status)
		case o.kind != "usg-bad" && o.status != 200:
			t.Errorf("%s request answered %d", o.kind, o.status)
		case o.kind == "cardiac-reject" && (o.billed() || o.billing.Reason != app.ReasonNoValid):
			t.Errorf("non-radiograph billed: %+v", *o.billing)
		case o.kind == "cardiac" && (!o.billed() || o.billing.CallType != app.CallSingle):
			t.Errorf("radiograph without uuid: %+v, want billed single", *o.billing)
		case o.kind == "cardiac-batch" && (!o.billed() || o.billing.CallType != app.CallSession):
			t.Errorf("batch: %+v, want billed session", *o.billing)
		case o.kind == "cardiac-pool" && o.billed():
			poolBilled[o.uuid]++
		case o.kind == "cardiac-pool" && o.billing.Reason == app.ReasonRecheck:
			poolRecheck++
		case o.kind == "cardiac-pool":
			t.Errorf("pool patient %s neither billed nor recheck: %+v", o.uuid, *o.billing)
		}
		if o.billed() {
			billed++
		}
		if o.billing != nil && o.billed() {
			// The response's rank, tier and rate are the ledger's.
			r := *o.billing.MonthlyUsage
			if r < 1 || r > len(evs) || evs[r-1].MonthlyUsage != r || string(app.TierFor(r)) != o.billing.Tier ||
				int64(o.billing.Rate*100+0.5) != evs[r-1].RateCents {
				t.Errorf("billed response %+v does not match ledger rank %d", *o.billing, r)
			}
		}
	}
	if len(evs) != billed {
		t.Errorf("ledger has %d events, responses billed %d", len(evs), billed)
	}
	if len(poolBilled) != pool {
		t.Errorf("%d of %d pool patients billed", len(poolBilled), pool)
	}
	for u, n := range poolBilled {
		if n != 1 {
			t.Errorf("patient %s billed %d times within 24 hours (two servers raced)", u, n)
		}
	}
	perPatient := map[string]int{}
	for _, e := range evs {
		if strings.HasPrefix(e.UUID, "dog-") {
			perPatient[e.UUID]++
		}
	}
	for u, n := range perPatient {
		if n != 1 {
			t.Errorf("ledger bills patient %s %d times", u, n)
		}
	}
	t.Logf("ledger: %d events = %d billed responses; %d pool patients billed once, %d recheck_24h; last tier %s",
		len(evs), billed, len(poolBilled), poolRecheck, evs[len(evs)-1].Tier)

	// kill -9 one server during a burst of USG predictions.
	var (
		acked []string
		n     atomic.Int64
		stop  = make(chan struct{})
	)
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				srv := servers[(c+i)%2]
				o, err := bodies.request(ctx, hc, srv.addr, key, 100+c, i*10, pool) // i*10: a USG call
				if err != nil || o.status != 200 {
					continue // the killed server
				}
				mu.Lock()
				acked = append(acked, o.uuid)
				mu.Unlock()
				n.Add(1)
			}
		}()
	}
	for n.Load() < 150 {
		time.Sleep(2 * time.Millisecond)
	}
	if err := servers[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	servers[1].cmd.Wait()
	killedAt := n.Load()
	for n.Load() < killedAt+100 {
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	evs, err = st.Repos().Ledger.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkLedger(t, evs)
	inLedger := map[string]bool{}
	for _, e := range evs {
		inLedger[e.UUID] = true
	}
	lost := 0
	for _, u := range acked {
		if !inLedger[u] {
			lost++
			t.Errorf("acknowledged prediction %s missing from the ledger", u)
		}
	}
	t.Logf("kill -9: %d predictions acknowledged (%d before the kill), %d lost; ledger %d events; whole test %v",
		len(acked), killedAt, lost, len(evs), time.Since(start).Round(time.Millisecond))
}

// checkLedger checks the ledger's invariants for one paygo customer in
// one month: ranks 1..N once each, every event at the tier of its rank
// and that tier's rate for its call type, ids unique.
func checkLedger(t *testing.T, evs []repo.Event) {
	t.Helper()
	cfg := app.DefaultConfig()
	ranks := make([]int, len(evs)+1)
	ids := map[string]bool{}
	for _, e := range evs {
		if e.MonthlyUsage < 1 || e.MonthlyUsage > len(evs) {
			t.Errorf("event %d has rank %d of %d", e.Seq, e.MonthlyUsage, len(evs))
			continue
		}
		ranks[e.MonthlyUsage]++
		tier := app.TierFor(e.MonthlyUsage)
		want := cfg.USGRate
		switch e.CallType {
		case app.CallSingle:
			want = cfg.Rates[tier].Single
		case app.CallSession:
			want = cfg.Rates[tier].Session
		}
		if e.Tier != string(tier) || e.RateCents != int64(want) {
			t.Errorf("event rank %d: tier %s rate %d, want %s %d", e.MonthlyUsage, e.Tier, e.RateCents, tier, want)
		}
		if ids[e.ID] || e.ID == "" {
			t.Errorf("event id %q repeated or empty", e.ID)
		}
		ids[e.ID] = true
	}
	for r := 1; r < len(ranks); r++ {
		if ranks[r] != 1 {
			t.Errorf("rank %d handed out %d times", r, ranks[r])
		}
	}
}
