package pacs

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/engine/dicom"
)

// freePort is a TCP port on loopback nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// outboxWithReport writes one Encapsulated PDF report of a DICOM study
// into a new outbox and returns the outbox and the PDF.
func outboxWithReport(t *testing.T) (string, string) {
	t.Helper()
	b, err := dicom.EncapsulatedPDF(dicom.PDFReport{StudyInstanceUID: "1.2.3.4.5", PatientID: "DICOM-0042", PatientName: "Smith^Rex",
		SeriesInstanceUID: "2.25.21", SOPInstanceUID: "2.25.22", Content: time.Now(), Title: "VHS report", PDF: []byte("%PDF-1.4\n%%EOF\n")})
	if err != nil {
		t.Fatal(err)
	}
	outbox := t.TempDir()
	path := filepath.Join(outbox, "2.25.22.dcm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return outbox, path
}

// TestSendToPACS: a storescp on loopback receives the report sent from
// the outbox, which moves to sent/; an unreachable node gives an error
// that names it, and the file stays in the outbox to be sent again.
func TestSendToPACS(t *testing.T) {
	for _, tool := range []string{"storescu", "storescp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (dcmtk; make deps)", tool)
		}
	}
	ctx := context.Background()
	recv := t.TempDir()
	port := freePort(t)
	scp := exec.Command("storescp", "-aet", "TESTPACS", "-od", recv, strconv.Itoa(port))
	if err := scp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scp.Process.Kill(); scp.Wait() })
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatal("storescp did not listen")
		}
	}
	outbox, path := outboxWithReport(t)
	node := app.PACSNode{AETitle: "TESTPACS", Host: "127.0.0.1", Port: port}
	sent, err := app.SendOutbox(ctx, StoreSCU{}, node, outbox)
	if err != nil || len(sent) != 1 {
		t.Fatalf("sent %v: %v", sent, err)
	}
	got, _ := filepath.Glob(filepath.Join(recv, "*"))
	if len(got) != 1 {
		t.Fatalf("storescp received %v", got)
	}
	if _, err := os.Stat(filepath.Join(outbox, app.OutboxSent, "2.25.22.dcm")); err != nil || fileExists(path) {
		t.Fatalf("not moved to sent: %v", err)
	}

	outbox, path = outboxWithReport(t)
	down := app.PACSNode{AETitle: "TESTPACS", Host: "127.0.0.1", Port: freePort(t)}
	sent, err = app.SendOutbox(ctx, StoreSCU{}, down, outbox)
	if err == nil || len(sent) != 0 || !strings.Contains(err.Error(), down.String()) || !strings.Contains(err.Error(), "stay in the outbox") {
		t.Fatalf("unreachable node: sent %v, %v", sent, err)
	}
	if !fileExists(path) {
		t.Fatal("the file left the outbox though it was not sent")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
