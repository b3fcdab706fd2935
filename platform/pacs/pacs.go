// Package pacs sends DICOM files to the clinic's PACS by C-STORE with
// dcmtk's storescu (make deps installs dcmtk): the adapter of
// app.PACSSender.
package pacs

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"vetlens/app"
)

// timeout bounds one association (connect, negotiate, store).
const timeout = 30 * time.Second

// StoreSCU sends files with storescu.
type StoreSCU struct {
	// Path is the storescu program ("": storescu on PATH).
	Path string
}

func (s StoreSCU) path() string {
	if s.Path == "" {
		return "storescu"
	}
	return s.Path
}

// Send stores the DICOM file at path on node (app.PACSSender). An
// unreachable node, a refused association or a refused store is an
// error with storescu's own words.
func (s StoreSCU) Send(ctx context.Context, node app.PACSNode, path string) error {
	if _, err := exec.LookPath(s.path()); err != nil {
		return errors.New("sending to a PACS is not set up on this computer (dcmtk's storescu is missing): ask whoever looks after it")
	}
	calling := node.CallingAE
	if calling == "" {
		calling = "VETLENS"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	secs := strconv.Itoa(int(timeout / time.Second))
	cmd := exec.CommandContext(ctx, s.path(), "-aet", calling, "-aec", node.AETitle, "-to", secs, "-ta", secs, "-td", secs,
		node.Host, strconv.Itoa(node.Port), path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s", err, lastLines(string(out), 3))
	}
	return nil
}

// lastLines is the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
