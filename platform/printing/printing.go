// Package printing prints files through the system's printing: CUPS's
// lp, with lpstat to tell whether a destination is set up. It implements
// the desktop's Printer port (ui.Printer).
package printing

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// lpstatTimeout bounds the readiness check.
const lpstatTimeout = 5 * time.Second

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
// (lp or lpstat missing), in the clinic's words: the fix (installing
// CUPS's client) is for whoever looks after the computer.
const noPrinting = "printing is not set up on this computer: ask whoever looks after it"

// Ready reports whether printing can work: lp is installed and CUPS
// names a default destination (or the configured one exists). why says,
// in a few words, what is missing.
func (p LP) Ready() (ok bool, why string) {
	if _, err := exec.LookPath(p.lp()); err != nil {
		return false, noPrinting
	}
	if _, err := exec.LookPath(p.lpstat()); err != nil {
		return false, noPrinting
	}
	ctx, cancel := context.WithTimeout(context.Background(), lpstatTimeout)
	defer cancel()
	if p.Destination != "" {
		if err := exec.CommandContext(ctx, p.lpstat(), "-p", p.Destination).Run(); err != nil {
			return false, "printer " + p.Destination + " is not set up"
		}
		return true, ""
	}
	out, err := exec.CommandContext(ctx, p.lpstat(), "-d").Output()
	if err != nil || !bytes.Contains(out, []byte(":")) || bytes.Contains(out, []byte("no system default")) {
		return false, "no default printer is chosen on this computer"
	}
	return true, ""
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
