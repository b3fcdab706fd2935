// Package printing prints files through the system's printing. It
// implements the desktop's Printer port (ui.Printer) twice: LP, CUPS's lp
// with lpstat to tell whether a destination is set up (Unix), and Shell,
// the Windows shell's "print" verb (shell_windows.go). System is the one
// this system uses; what Ready says when a printer is missing is shared
// (ready).
package printing

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// readyTimeout bounds the readiness check.
const readyTimeout = 5 * time.Second

// LP prints with CUPS's command-line client.
type LP struct {
	// LPPath and LPStatPath are the commands; empty: "lp" and "lpstat"
	// from PATH.
	LPPath, LPStatPath string
	// Destination is the printer; empty: the system default.
	Destination string
}

func (p LP) lp() string     { return orDefault(p.LPPath, "lp") }
func (p LP) lpstat() string { return orDefault(p.LPStatPath, "lpstat") }
func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// noPrinting is why Print is off where this computer cannot print at all
// (lp or lpstat missing; on Windows no program prints PDF files), in the
// clinic's words: the fix (installing CUPS's client, a PDF reader) is for
// whoever looks after the computer.
const noPrinting = "printing is not set up on this computer: ask whoever looks after it"

// spooler is what Ready asks one system's printing.
type spooler interface {
	// missing says why this computer cannot print at all, "" when it can.
	missing() string
	// hasDestination reports whether the printer named is set up.
	hasDestination(ctx context.Context, name string) bool
	// hasDefault reports whether a default printer is chosen.
	hasDefault(ctx context.Context) bool
}

// ready is Ready for every system: printing is possible at all, and the
// destination (empty: the default printer) is set up. why says, in a few
// words, what is missing.
func ready(s spooler, destination string) (ok bool, why string) {
	if why := s.missing(); why != "" {
		return false, why
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if destination != "" {
		if !s.hasDestination(ctx, destination) {
			return false, "printer " + destination + " is not set up"
		}
		return true, ""
	}
	if !s.hasDefault(ctx) {
		return false, "no default printer is chosen on this computer"
	}
	return true, ""
}

// Ready reports whether printing can work: lp is installed and CUPS
// names a default destination (or the configured one exists).
func (p LP) Ready() (ok bool, why string) { return ready(p, p.Destination) }

func (p LP) missing() string {
	if _, err := exec.LookPath(p.lp()); err != nil {
		return noPrinting
	}
	if _, err := exec.LookPath(p.lpstat()); err != nil {
		return noPrinting
	}
	return ""
}

func (p LP) hasDestination(ctx context.Context, name string) bool {
	return exec.CommandContext(ctx, p.lpstat(), "-p", name).Run() == nil
}

func (p LP) hasDefault(ctx context.Context) bool {
	out, err := exec.CommandContext(ctx, p.lpstat(), "-d").Output()
	return err == nil && bytes.Contains(out, []byte(":")) && !bytes.Contains(out, []byte("no system default"))
}

// Print sends the file to the printer and returns lp's answer (the job
// id line).
func (p LP) Print(ctx context.Context, path string) (string, error) {
	args := []string{}
	if p.Destination != "" {
		args = append(args, "-d", p.Destination)
	}
	args = append(args, "--", path)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.lp(), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("lp: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
