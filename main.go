// Command vetlens is the VetLens clinic application: cardiac measurement
// from thoracic radiographs and feline USG screening, from the command line
// and the desktop GUI (the default command), with the LAN API.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"vetlens/cli"
	"vetlens/internal/config"
)

const usage = `usage: vetlens [<command> [flags]]

commands:
  gui [--data-dir DIR] [--serve [--addr HOST:PORT]]
                                        the desktop window (the default without a command);
                                        --serve also runs the HTTPS API in-process
  predict [--render OUT.jpg] FILE...   cardiac measurement of radiograph files, one JSON body per line
  corners FILE                          screen corners of a photographed radiograph, the /v3/corners body
  preprocess FILE [-o OUT.jpg]          corners plus perspective correction, the /v3/preprocess body
  capture [--camera SPEC] [--max-seconds N]
                                        a headless capture session from a camera, video, image folder or image,
                                        one /v3/pop-session body per line
  usg --bun N --creatinine N --hgb N --lymphocytes N --age-months N
  usg --json FILE|-                     feline USG screening, the usg-v1 {result, meta} body
  serve --data-dir DIR [--addr HOST:PORT] [--cert F --key F] [--redirect-addr HOST:PORT]
                                        the LAN API over HTTPS (/v3 and /usg/v1)
  keys create --data-dir DIR --customer NAME [--tier T] | keys list --data-dir DIR | keys revoke --data-dir DIR PREFIX
                                        API key administration
  serve, gui and keys take --store bbolt|postgres://... (or $VETLENS_STORE): the embedded database in
                                        the data dir (default) or a PostgreSQL database several servers share
  store migrate --store postgres://...  bring a PostgreSQL database to this version's schema
  store copy [--data-dir DIR] --from bbolt|URL --to URL|bbolt
                                        copy every record into an empty store (a clinic joining a group)
  dataset export --data-dir DIR OUT | dataset import --data-dir DIR SRC
                                        the clinician-corrected measurements as a DogHeart-layout folder
                                        (patient ids hashed), or such a folder into the learning pool (docs/learning.md)
  learn --data-dir DIR [--steps N | --minutes M] [--no-promote]
                                        fine-tune the cardiac landmark models on the pool; promote only on evidence
  models list|use --data-dir DIR [VERSION]
                                        the cardiac model versions; use one (rollback, "shipped" included)
  help                                  this text
  help config                           every flag and environment variable with its default

Run "vetlens <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cli.GUI(ctx, nil, stdout, stderr)
	}
	switch args[0] {
	case "gui":
		return cli.GUI(ctx, args[1:], stdout, stderr)
	case "predict":
		return cli.Predict(ctx, args[1:], stdout, stderr)
	case "corners":
		return cli.Corners(ctx, args[1:], stdout, stderr)
	case "preprocess":
		return cli.Preprocess(ctx, args[1:], stdout, stderr)
	case "capture":
		return cli.Capture(ctx, args[1:], stdout, stderr)
	case "usg":
		return cli.USG(ctx, args[1:], stdin, stdout, stderr)
	case "serve":
		return cli.Serve(ctx, args[1:], stdout, stderr)
	case "keys":
		return cli.Keys(ctx, args[1:], stdout, stderr)
	case "store":
		return cli.StoreCmd(ctx, args[1:], stdout, stderr)
	case "dataset":
		return cli.Dataset(ctx, args[1:], stdout, stderr)
	case "learn":
		return cli.Learn(ctx, args[1:], stdout, stderr)
	case "models":
		return cli.ModelsCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] == "config" {
			fmt.Fprintln(stdout, "Every setting: its flag, its environment variable, the commands that take it, its default.")
			if err := config.Print(stdout); err != nil {
				return cli.ExitInternal
			}
			return cli.ExitOK
		}
		fmt.Fprint(stdout, usage)
		fmt.Fprintln(stdout)
		cli.PrintExitCodes(stdout)
		return cli.ExitOK
	default:
		fmt.Fprintf(stderr, "vetlens: unknown command %q\n\n%s", args[0], usage)
		return cli.ExitUsage
	}
}
