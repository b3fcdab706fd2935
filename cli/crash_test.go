package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
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
	"vetlens/platform/store"
)

const crashChildEnv = "VETLENS_CRASH_CHILD_DIR"

// TestCrashChild is the server process of TestCrashDuringBurst; it only
// runs when that test starts it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashDuringBurst")
	}
	os.Exit(Serve(context.Background(), []string{"--data-dir", dir, "--addr", "127.0.0.1:0", "--models", filepath.Join("..", "models")}, os.Stdout, os.Stderr))
}

// TestCrashDuringBurst kills the server with SIGKILL while 8 clients send
// billable USG predictions, each with its own uuid; after the kill the
// database opens clean and every acknowledged (200) prediction is in the
// ledger.
func TestCrashDuringBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	st, err := store.Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := app.New(app.Deps{Repos: st.Repos()}, app.DefaultConfig())
	key, _, err := svc.Accounts.CreateKey(context.Background(), "crash-clinic", "")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "vetlens: serving https://"); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("server did not start")
	}
	go io.Copy(io.Discard, out)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var (
		mu    sync.Mutex
		acked []string
		n     atomic.Int64
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				uuid := fmt.Sprintf("cat-%d-%d", c, i)
				body := `{"BUN":27,"CREATININE":1.2,"HGB":15.1,"ABSOLUTE LYMPHOCYTES":1435,"age_months":14,"uuid":"` + uuid + `"}`
				req, _ := http.NewRequest("POST", "https://"+addr+"/usg/v1/predict", strings.NewReader(body))
				req.Header.Set("x-api-key", key)
				resp, err := client.Do(req)
				if err != nil {
					return // the server died
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					mu.Lock()
					acked = append(acked, uuid)
					mu.Unlock()
					n.Add(1)
				}
			}
		}()
	}
	for n.Load() < 150 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(stop)
	wg.Wait()

	st, err = store.Open(dir, time.Second)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	evs, err := st.Ledger().Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inLedger := map[string]bool{}
	for _, e := range evs {
		inLedger[e.UUID] = true
	}
	for _, u := range acked {
		if !inLedger[u] {
			t.Errorf("acknowledged prediction %s missing from the ledger", u)
		}
	}
	usage, _ := st.Ledger().MonthlyUsage(context.Background(), "crash-clinic", app.Month(time.Now()))
	if usage != len(evs) {
		t.Errorf("usage index %d, ledger %d", usage, len(evs))
	}
	t.Logf("%d acknowledged, %d in the ledger (the difference was committed but not yet answered)", len(acked), len(evs))
}
