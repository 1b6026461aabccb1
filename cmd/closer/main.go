// Command closer is the offline companion of the closer web app: it runs the
// same kernels, embeddings and question designs on any triplet file.
//
//	closer kernel   --kind k1|k2 --in triplets.csv --out FILE ...
//	closer embed    --method tste --dim 2 --in triplets.csv --out embedding.csv ...
//	closer embed    --in odd-one-out.csv|rank.csv [--format F] [--derived] --out embedding.csv ...
//	closer dims     --in triplets.csv --max-dim 5 --folds 5 ...
//	closer bootstrap --in triplets.csv --dim 2 --reps 100 --out spread.csv ...
//	closer curve    --in triplets.csv --dim 2 --target 0.15 ...
//	closer eval     --embedding embedding.csv --in triplets.csv ...
//	closer simulate --design basis --points gmm --budget 40000 ...
//	closer simulate --format odd-one-out|rank:8:2 --design random|active ...
//	closer load     --base URL --study SLUG --concurrency 200 --duration 30s ...
//
// Each subcommand explains its flags with -h.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand: run parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is filled by the init functions of the subcommand files, one file
// per subcommand, so that each lives next to its own flags.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary: summary, run: run}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "closer: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(stderr, "closer %s: %v\n", args[0], err)
		return 1
	}
}

// errUsage marks an error already explained by the flag package.
var errUsage = errors.New("usage")

// parseFlags parses args with fs, mapping the flag package's errors to
// errUsage (message already printed) or flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return errUsage
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: closer <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'closer <command> -h' for the flags of one command.")
}
