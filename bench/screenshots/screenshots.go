package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"vetlens/app"
	"vetlens/engine/usg"
	"vetlens/ui"
)

// The screenshot run's patients, as an X-ray system's DICOM tags would
// give them (the desktop prefills its patient record from such tags): a
// dog for the radiograph, a cat for the bloodwork (feline only).
// screenshotDogID is the dog's id, a constant the identifier rule
// accepts, for the calls that take a patient id.
const screenshotDogID = "DEMO-0001"

var (
	screenshotDog = app.PatientTags{PatientID: screenshotDogID, Name: "Demo^Rex", Species: "Canine", Breed: "Boxer", Sex: "M",
		Neutered: "ALTERED", BirthDate: "20210115", WeightKg: 31.5, ResponsiblePerson: "Demo^Jane"}
	screenshotCat = app.PatientTags{PatientID: "DEMO-0002", Name: "Demo^Tom", Species: "Feline", Breed: "Domestic Shorthair", Sex: "M",
		Neutered: "ALTERED", BirthDate: "20140301", WeightKg: 4.6, ResponsiblePerson: "Demo^Jane"}
)

// screenshotTimeout bounds the whole screenshot run.
const screenshotTimeout = 4 * time.Minute

// screenshotRun drives the window as a clinician would, for the Xvfb
// end-to-end test and docs/screenshots: a demo dog's record prefilled from
// patient tags, a capture session on spec, saving the result to its
// history, a demo cat's bloodwork screening, the dog's record; a PNG of
// every screen in dir (NN-name.png).
func screenshotRun(ctx context.Context, u *ui.UI, w fyne.Window, spec, dir string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pause(ctx, 2*time.Second) // the window maps and draws once
	// A first start (fresh preferences, no patient): the window says
	// what to do first.
	var start string
	fyne.DoAndWait(func() { start = u.StartHere() })
	if start == "" {
		return fmt.Errorf("a first start shows no first-start note")
	}
	fmt.Fprintf(stdout, "first start: %s\n", start)
	if err := shoot(w, filepath.Join(dir, "00-first-start.png")); err != nil {
		return err
	}
	var err error
	// The live preview with the screen outline, then the session.
	fyne.DoAndWait(func() {
		if _, err = u.PrefillPatient(screenshotDog); err != nil {
			return
		}
		err = u.StartCapture(spec, false)
	})
	if err != nil {
		return fmt.Errorf("start preview: %w", err)
	}
	var n0, n1 int
	fyne.DoAndWait(func() { n0 = u.PreviewFramesShown() })
	t0 := time.Now()
	pause(ctx, 3*time.Second)
	fyne.DoAndWait(func() { n1 = u.PreviewFramesShown() })
	fmt.Fprintf(stdout, "preview: %d frames drawn in %.1f s (%.1f fps; the video plays at 15 fps)\n", n1-n0, time.Since(t0).Seconds(), float64(n1-n0)/time.Since(t0).Seconds())
	if err := shoot(w, filepath.Join(dir, "00-capture-live.png")); err != nil {
		return err
	}
	fyne.DoAndWait(func() { err = u.StartCapture(spec, true) })
	if err != nil {
		return fmt.Errorf("start capture: %w", err)
	}
	var status string
	for running := true; running; {
		if ctx.Err() != nil {
			return fmt.Errorf("capture session did not finish: %w", ctx.Err())
		}
		pause(ctx, 200*time.Millisecond)
		fyne.DoAndWait(func() { running, status = u.CaptureState() })
	}
	m := u.ReviewMeasurement()
	if m == nil || !strings.Contains(status, "Session complete") {
		return fmt.Errorf("capture session did not complete: %s", status)
	}
	fmt.Fprintf(stdout, "capture: %s result %d VHS %s\n", status, m.Result.Code, fmtPtr(m.Result.VHS))
	fyne.DoAndWait(func() { err = u.SaveReview() })
	if err != nil {
		return fmt.Errorf("save review: %w", err)
	}
	for i, name := range u.Tabs() {
		if name == "Bloodwork" {
			fyne.DoAndWait(func() {
				if _, err = u.PrefillPatient(screenshotCat); err == nil {
					u.SubmitBloodwork([usg.NumFeatures]string{"32", "2.4", "14", "1800", "95"})
				}
			})
			if err != nil {
				return fmt.Errorf("bloodwork patient: %w", err)
			}
			pause(ctx, 2*time.Second) // the screening runs in the background
		}
		fyne.DoAndWait(func() {
			if name == "Patients" {
				u.OpenPatient(screenshotDogID)
			}
			u.SelectTab(name)
		})
		pause(ctx, 700*time.Millisecond)
		if err := shoot(w, filepath.Join(dir, fmt.Sprintf("%02d-%s.png", i+1, strings.ToLower(name)))); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "screenshots written to %s\n", dir)
	// The listener answers where the Server tab says it does.
	var urls []string
	fyne.DoAndWait(func() { urls = u.ListenerURLs() })
	if len(urls) == 0 {
		return fmt.Errorf("the Server tab shows no URL for the listener")
	}
	for _, url := range urls {
		status, err := answers(ctx, url)
		if err != nil {
			return fmt.Errorf("the Server tab shows %s, which does not answer: %w", url, err)
		}
		fmt.Fprintf(stdout, "listener: %s (shown on the Server tab) answers: %s without a key\n", url, status)
	}
	return nil
}

// answers sends GET /v3/health without a key to url (the certificate is
// self-signed; reaching the server is what counts) and returns its status.
func answers(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v3/health", nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Status, nil
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// shoot writes the window as PNG: the canvas read back from OpenGL, or,
// where that reads back one flat colour (Mesa's software GL under Xvfb
// cannot read the front buffer), the window as the X server shows it.
func shoot(w fyne.Window, path string) error {
	var img image.Image
	fyne.DoAndWait(func() { img = w.Canvas().Capture() })
	if flat(img) {
		x, err := xwdCapture(w.Title())
		if err != nil {
			return fmt.Errorf("screenshot %s: OpenGL read back a flat image, and %w", path, err)
		}
		img = x
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", path, err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("screenshot %s: %w", path, err)
	}
	return f.Close()
}

// flat reports whether every pixel of img has one colour.
func flat(img image.Image) bool {
	b := img.Bounds()
	if b.Empty() {
		return true
	}
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, _ := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 {
				return false
			}
		}
	}
	return true
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}
