package cli

import (
	"fmt"
	"io"
)

// Exit statuses of every subcommand: one table, printed by `vetlens help`
// and listed in docs/cli.md.
const (
	ExitOK       = 0 // the command did what was asked; its result is printed
	ExitRejected = 1 // an input was refused or could not be measured; its error body is printed
	ExitUsage    = 2 // bad command line
	ExitInternal = 3 // ONNX Runtime, the models, the data directory or an internal step failed
	// ExitNotPromoted: `vetlens learn` finished but the promotion rule
	// refused the candidate.
	ExitNotPromoted = 4
)

// ExitCodes is the exit status table: each status with its meaning.
var ExitCodes = []struct {
	Code    int
	Meaning string
}{
	{ExitOK, "success: the result is printed (a rejected radiograph, result code 6, is a result)"},
	{ExitRejected, "an input was refused or could not be measured (unreadable file, bad image, no screen corners, invalid USG request, a capture session that failed); its error body is printed and the other inputs still run; learn: a pool too small to learn from; models use: an unknown version"},
	{ExitUsage, "bad command line"},
	{ExitInternal, "ONNX Runtime, the models or the data directory unusable, or an internal error (learn: the trainer, e.g. PyTorch missing, or a cancelled run)"},
	{ExitNotPromoted, "learn: the run finished but the promotion rule refused the candidate; the models in use stay (the report says which rule failed)"},
}

// PrintExitCodes writes the exit status table.
func PrintExitCodes(w io.Writer) {
	fmt.Fprintln(w, "exit status:")
	for _, e := range ExitCodes {
		fmt.Fprintf(w, "  %d  %s\n", e.Code, e.Meaning)
	}
}
