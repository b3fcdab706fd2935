package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"vetlens/cli"
	"vetlens/internal/config"
)

// TestHelpListsExitCodes: `vetlens help` and docs/cli.md list the one
// exit status table, each status with its meaning.
func TestHelpListsExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"help"}, nil, &out, &errb); code != cli.ExitOK {
		t.Fatalf("help: exit %d", code)
	}
	doc, err := os.ReadFile("docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cli.ExitCodes {
		line := fmt.Sprintf("%d  %s", e.Code, e.Meaning)
		if !strings.Contains(out.String(), line) {
			t.Errorf("help lacks %q", line)
		}
		if row := fmt.Sprintf("| %d | %s |", e.Code, e.Meaning); !strings.Contains(string(doc), row) {
			t.Errorf("docs/cli.md lacks the row %q", row)
		}
	}
	if code := run(context.Background(), []string{"bogus"}, nil, &out, &errb); code != cli.ExitUsage {
		t.Errorf("unknown command: exit %d, want %d", code, cli.ExitUsage)
	}
}

// TestHelpConfig: `vetlens help config` lists every setting of
// internal/config with its flag, environment variable and default.
func TestHelpConfig(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"help", "config"}, nil, &out, &errb); code != cli.ExitOK {
		t.Fatalf("help config: exit %d", code)
	}
	for _, s := range config.All() {
		if s.Flag != "" && !strings.Contains(out.String(), "--"+s.Flag+" ") {
			t.Errorf("help config lacks --%s", s.Flag)
		}
		if s.Env != "" && !strings.Contains(out.String(), "$"+s.Env) {
			t.Errorf("help config lacks $%s", s.Env)
		}
		if !strings.Contains(out.String(), s.Default) {
			t.Errorf("help config lacks the default of %s%s: %q", s.Flag, s.Env, s.Default)
		}
	}
}
