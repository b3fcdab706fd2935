package cli

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"vetlens/internal/config"
)

// arguments are the flags that are not configuration but what one run
// works on (files, request values, outputs); everything else a command
// takes must be a setting of internal/config, registered from there.
var arguments = map[string]bool{
	"render": true, "o": true, "json": true, "clinic-code": true, "uuid": true, "bun": true, "creatinine": true,
	"hgb": true, "lymphocytes": true, "age-months": true, "customer": true, "tier": true,
}

// TestFlagsFromConfig: the flags serve, usg and keys print with -h are
// either per-run arguments or internal/config's settings with their help.
func TestFlagsFromConfig(t *testing.T) {
	settings := map[string]config.Setting{}
	for _, s := range config.All() {
		if s.Flag != "" {
			settings[s.Flag] = s
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	ctx := context.Background()
	for name, cmd := range map[string]func(io.Writer) int{
		"serve":  func(w io.Writer) int { return Serve(ctx, []string{"-h"}, io.Discard, w) },
		"usg":    func(w io.Writer) int { return USG(ctx, []string{"-h"}, nil, io.Discard, w) },
		"keys":   func(w io.Writer) int { return Keys(ctx, []string{"create", "-h"}, io.Discard, w) },
		"learn":  func(w io.Writer) int { return Learn(ctx, []string{"-h"}, io.Discard, w) },
		"models": func(w io.Writer) int { return ModelsCmd(ctx, []string{"use", "-h"}, io.Discard, w) },
		"gui": func(w io.Writer) int {
			_, code, _ := parseGUI([]string{"-h"}, w, nil)
			return code
		},
	} {
		t.Run(name, func(t *testing.T) {
			var help bytes.Buffer
			if code := cmd(&help); code != ExitOK {
				t.Fatalf("-h: exit %d", code)
			}
			flags := flagLine.FindAllStringSubmatch(help.String(), -1)
			if len(flags) == 0 {
				t.Fatalf("no flags in %q", help.String())
			}
			for _, m := range flags {
				f := m[1]
				s, ok := settings[f]
				switch {
				case arguments[f]:
				case !ok:
					t.Errorf("--%s is not declared in internal/config", f)
				case !strings.Contains(help.String(), s.Help):
					t.Errorf("--%s: help does not carry config's text %q", f, s.Help)
				default:
					found := false
					for _, c := range s.Commands {
						found = found || c == name
					}
					if !found {
						t.Errorf("--%s: config does not list %s among its commands %v", f, name, s.Commands)
					}
				}
			}
		})
	}
}
