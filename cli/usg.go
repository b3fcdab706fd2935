// Package cli holds the logic of VetLens's command-line subcommands; main
// only dispatches to them.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"vetlens/api/usgv1"
	"vetlens/engine/usg"
	"vetlens/internal/config"
)

// usgFlags maps each feature flag to its canonical request key.
var usgFlags = []struct{ flag, key, help string }{
	{"bun", usg.FeatureBUN, "BUN, mg/dL"},
	{"creatinine", usg.FeatureCreatinine, "creatinine, mg/dL (above 50 is read as umol/L)"},
	{"hgb", usg.FeatureHGB, "haemoglobin, g/dL"},
	{"lymphocytes", usg.FeatureLymphocytes, "absolute lymphocytes, per uL (below 50 is read as thousands)"},
	{"age-months", usg.FeatureAgeMonths, "age in months"},
}

// USG runs `vetlens usg`: it validates one request given as flags or as a
// JSON body (--json FILE, or - for stdin), predicts with the shipped USG
// model through app.Service.USG.PredictUSGLocal (the use case of
// /usg/v1/predict, without logging or billing), and prints the spec's {result, meta} body or its error body to
// stdout. It returns the process exit status.
func USG(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	received := time.Now()
	fs := flag.NewFlagSet("usg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vetlens usg --bun N --creatinine N --hgb N --lymphocytes N --age-months N")
		fmt.Fprintln(stderr, "       vetlens usg --json FILE|-")
		fs.PrintDefaults()
	}
	vals := make(map[string]*string, len(usgFlags))
	for _, f := range usgFlags {
		vals[f.flag] = fs.String(f.flag, "", f.help)
	}
	jsonFile := fs.String("json", "", "read the request body (spec usg-v1) from FILE, or stdin for -")
	clinic := fs.String("clinic-code", "", "optional clinic code (logged only)")
	uuid := fs.String("uuid", "", "optional patient identifier (logged only)")
	models := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vetlens usg: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var body []byte
	if set["json"] {
		for _, f := range usgFlags {
			if set[f.flag] {
				fmt.Fprintf(stderr, "vetlens usg: --json and --%s cannot be combined\n", f.flag)
				return ExitUsage
			}
		}
		var err error
		if body, err = readBody(*jsonFile, stdin); err != nil {
			fmt.Fprintf(stderr, "vetlens usg: %v\n", err)
			return ExitUsage
		}
	} else {
		payload := map[string]string{}
		for _, f := range usgFlags {
			if set[f.flag] {
				payload[f.key] = *vals[f.flag]
			}
		}
		if set["clinic-code"] {
			payload["clinic_code"] = *clinic
		}
		if set["uuid"] {
			payload["uuid"] = *uuid
		}
		var err error
		if body, err = json.Marshal(payload); err != nil {
			return printError(stdout, stderr, fmt.Errorf("encode request: %w", err))
		}
	}

	req, err := usgv1.ParseRequest(body)
	if err != nil {
		return printError(stdout, stderr, err)
	}
	req.Received = received
	svc, closeAll, err := openLocal(ctx, config.ModelsDir(*models), *ortLib, localNeeds{usg: true})
	if err != nil {
		return printError(stdout, stderr, err)
	}
	defer closeAll()
	resp, err := svc.USG.PredictUSGLocal(ctx, req)
	if err != nil {
		return printError(stdout, stderr, err)
	}
	if err := writeJSON(stdout, usgv1.NewResponse(resp)); err != nil {
		fmt.Fprintf(stderr, "vetlens usg: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// readBody reads a request body from a file, or from stdin for "-".
func readBody(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read request from stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	return b, nil
}

// printError prints the spec's error body and returns the exit status:
// ExitRejected for request errors, ExitInternal for everything else (which
// is also reported on stderr).
func printError(stdout, stderr io.Writer, err error) int {
	body := usgv1.ErrorBodyOf(err)
	if werr := writeJSON(stdout, body); werr != nil {
		fmt.Fprintf(stderr, "vetlens usg: %v\n", werr)
	}
	if body.Error.Code == usgv1.CodeInternal {
		fmt.Fprintf(stderr, "vetlens usg: %v\n", err)
		return ExitInternal
	}
	return ExitRejected
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
