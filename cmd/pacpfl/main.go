// Command pacpfl is the command-line front end of the pacpfl library:
// version and build information, benchmarks, training and experiments.
//
// Each subcommand lives in its own file and registers itself in init, so the
// command table below is the only shared piece.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/wisdom"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the command ran and failed (bad data file, numerical failure, …)
	exitUsage = 2 // the command line or the environment is wrong
	// exitInterrupted: stopped by SIGINT or SIGTERM before the end (128 +
	// SIGINT, what a shell reports for a program the signal killed).
	exitInterrupted = 130
)

// signalContext is done at the first SIGINT or SIGTERM, which a run answers
// by stopping at its next round; the signal's default handling is restored
// then, so that a second Ctrl-C ends a run stuck inside a long round at
// once.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// stopOn is a round hook (fl.Config.AfterRound) that ends training with
// ctx.Err() once ctx is done.
func stopOn(ctx context.Context) func(*fl.Server, int) error {
	return func(*fl.Server, int) error { return ctx.Err() }
}

// command is one subcommand. run gets the arguments after the subcommand name
// and returns the exit status.
type command struct {
	name    string
	summary string // one line for `pacpfl help`
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

// configError reports an unusable environment setting (PACPFL_SIMD,
// PACPFL_CPU_GHZ); a variable so tests can replay the start-up failure
// in-process.
var configError = func() error {
	if err := asm.ConfigError(); err != nil {
		return err
	}
	return bench.ConfigError()
}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("pacpfl: duplicate subcommand " + c.name)
	}
	commands[c.name] = c
}

// wisdomSource is where the native BLAS's tuning came from: main applies
// the wisdom at start-up (PACPFL_WISDOM=off: the defaults); the tests, which
// call run, keep the defaults.
var wisdomSource = wisdom.Source{Kind: "defaults"}

func main() {
	if asm.ConfigError() == nil {
		wisdomSource = wisdom.Apply()
		if wisdomSource.Notice != "" {
			fmt.Fprintf(os.Stderr, "pacpfl: %s (set %s=off to silence)\n", wisdomSource.Notice, wisdom.EnvVar)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it is what the tests call.
func run(args []string, stdout, stderr io.Writer) int {
	if err := configError(); err != nil {
		fmt.Fprintf(stderr, "pacpfl: %v\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if isHelp(name) {
		name = "help"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "pacpfl: unknown subcommand %q\nrun 'pacpfl help' for the subcommands\n", args[0])
		return exitUsage
	}
	// A result that could not be written (a full disk, a closed pipe) is a
	// failure, whatever the command thought of its work.
	out := &checkedWriter{w: stdout}
	st := c.run(args[1:], out, &cliStderr{Writer: stderr, stdout: out})
	if out.err != nil && st == exitOK {
		fmt.Fprintf(stderr, "pacpfl %s: writing standard output: %v\n", name, out.err)
		return exitError
	}
	return st
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl <subcommand> [flags]")
	fmt.Fprintln(w, "\nsubcommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'pacpfl <subcommand> -h' for a subcommand's flags.")
}

// newFlagSet returns a flag set that reports errors to stderr without
// exiting. A bad flag prints its error and one line pointing at -h, not the
// whole flag list (which scrolled the error away); -h prints the flag list
// to stdout (see parseFlags).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pacpfl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// cliStderr is the stderr that run hands to the subcommands: it also knows
// stdout, where -h prints (help asked for is output, not a diagnostic).
type cliStderr struct {
	io.Writer
	stdout io.Writer
}

// helpWriter is where the help of a flag set goes: stdout when known.
func helpWriter(fs *flag.FlagSet) io.Writer {
	if c, ok := fs.Output().(*cliStderr); ok {
		return c.stdout
	}
	return fs.Output()
}

// printFlagHelp prints the usage line and the flags of fs to w.
func printFlagHelp(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: %s [flags]\n\nflags:\n", fs.Name())
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// badUsage ends a usage error on fs with the pointer to its help.
func badUsage(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "run '%s -h' for the flags\n", fs.Name())
}

// parseFlags parses args and returns the exit status to use if parsing
// failed (ok=false): 0 for -h (the help printed on stdout), 2 for a bad
// flag. Positional arguments are refused unless allowArgs.
func parseFlags(fs *flag.FlagSet, args []string, allowArgs bool) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printFlagHelp(fs, helpWriter(fs))
			return exitOK, false
		}
		badUsage(fs) // the flag package printed the error itself
		return exitUsage, false
	}
	if !allowArgs && fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		badUsage(fs)
		return exitUsage, false
	}
	return exitOK, true
}

func init() {
	register(&command{
		name:    "help",
		summary: "list the subcommands",
		run: func(args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 && !isHelp(args[0]) {
				if c, ok := commands[args[0]]; ok {
					return c.run([]string{"-h"}, stdout, stderr)
				}
				fmt.Fprintf(stderr, "pacpfl help: unknown subcommand %q\n", args[0])
				return exitUsage
			}
			usage(stdout)
			return exitOK
		},
	})
}
