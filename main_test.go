package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"vetlens/cli"
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
