package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"vetlens/app"
	"vetlens/platform/httpapi"
)

// apiServer is the HTTP API over a fresh store with the models, wired by
// openService as serve and gui wire it, and a key for it.
func apiServer(t *testing.T, models string) (url, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, closeAll, err := openService(ctx, serveConfig{dataDir: t.TempDir(), models: models, inFlight: 4, usgRate: app.DefaultUSGRate, cardiacConc: 1}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAll)
	if svc.Cardiac.Engine() == nil || svc.USG.Engine() == nil || svc.Sessions.Pipeline() == nil {
		t.Fatal("the models did not load")
	}
	key, _, err = svc.Accounts.CreateKey(ctx, "Parity clinic", app.TierPaygo)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Config{Logger: log}))
	t.Cleanup(srv.Close)
	return srv.URL, key
}

// post sends body to the API and returns the status and the decoded JSON.
func post(t *testing.T, url, key, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+path, bytes.NewReader(b))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode, m
}

// decodeLine decodes one JSON line.
func decodeLine(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return m
}

// TestCommandsPrintWhatTheAPIAnswers: `vetlens predict`, `corners`,
// `preprocess` and `usg` print the body the HTTP API answers for the same
// input, less billing and history; for a refused input the same error
// text with the API's status.
func TestCommandsPrintWhatTheAPIAnswers(t *testing.T) {
	models := testModelsDir(t)
	// corners and preprocess find the models as installed (config.ModelsDir).
	t.Setenv("VETLENS_MODELS", models)
	url, key := apiServer(t, models)
	ctx := context.Background()
	d := t.TempDir()
	black := filepath.Join(d, "black.png")
	writeImage(t, black, grayPicture(8, 8)) // too small for the API: 400
	files := map[string]string{
		"radiograph":   filepath.Join(popFixtures, "radiograph_0001.jpg"),
		"screen photo": filepath.Join(popFixtures, "screen_0001.jpg"),
		"phantom":      filepath.Join("..", "engine", "cardiac", "testdata", "phantoms", "xraysim_3_1024x1024.jpg"),
		"colour scene": filepath.Join(d, "scene.png"),
		"tiny":         black,
	}
	writeImage(t, files["colour scene"], colourPicture(640, 480))
	for name, file := range files {
		t.Run("predict "+name, func(t *testing.T) {
			img, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			status, want := post(t, url, key, "/v3/predict", map[string]any{"image": base64.StdEncoding.EncodeToString(img)})
			code, out, stderr := run(t, "--models", models, file)
			got := decodeLine(t, strings.TrimSpace(out))
			if status != 200 {
				want["status"], want["file"] = float64(status), file
				if code != ExitRejected || !reflect.DeepEqual(got, want) {
					t.Fatalf("exit %d, line %v; API %d %v (stderr %s)", code, got, status, want, stderr)
				}
				return
			}
			delete(want, "billing")
			delete(want, "historic_vhs")
			delete(want, "historic_vlas")
			if code != ExitOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("exit %d\nCLI %v\nAPI %v", code, got, want)
			}
		})
	}
	for _, tc := range []struct {
		name, file string
		cmd        func(context.Context, []string, io.Writer, io.Writer) int
		path       string
	}{
		{"corners screen photo", files["screen photo"], Corners, "/v3/corners"},
		{"corners radiograph file", files["radiograph"], Corners, "/v3/corners"},
		{"corners tiny", files["tiny"], Corners, "/v3/corners"},
		{"preprocess screen photo", files["screen photo"], Preprocess, "/v3/preprocess"},
		{"preprocess colour scene", files["colour scene"], Preprocess, "/v3/preprocess"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			status, want := post(t, url, key, tc.path, map[string]any{"image": base64.StdEncoding.EncodeToString(img)})
			var out, errb bytes.Buffer
			code := tc.cmd(ctx, []string{tc.file}, &out, &errb)
			got := decodeLine(t, strings.TrimSpace(out.String()))
			wantCode := ExitOK
			if status != 200 {
				want["status"], want["file"] = float64(status), tc.file
				wantCode = ExitRejected
			}
			if code != wantCode || !reflect.DeepEqual(got, want) {
				t.Fatalf("exit %d (want %d)\nCLI %v\nAPI %d %v\nstderr %s", code, wantCode, got, status, want, errb.String())
			}
		})
	}
	t.Run("usg", func(t *testing.T) {
		body := map[string]any{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14}
		_, want := post(t, url, key, "/usg/v1/predict", body)
		b, _ := json.Marshal(body)
		var out, errb bytes.Buffer
		if code := USG(ctx, []string{"--models", models, "--json", "-"}, bytes.NewReader(b), &out, &errb); code != ExitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		got := decodeLine(t, strings.Join(strings.Fields(out.String()), " "))
		// elapsed_ms is a timing; everything else must agree.
		for _, m := range []map[string]any{got, want} {
			delete(m["meta"].(map[string]any), "elapsed_ms")
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("CLI %v\nAPI %v", got, want)
		}
	})
}
