// Command pacpfl is the command-line front end of the pacpfl library:
// version and build information, benchmarks, training and experiments.
//
// Each subcommand lives in its own file and registers itself in init, so the
// command table below is the only shared piece.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/wisdom"
)

// Exit statuses (package cli's).
const (
	exitOK          = cli.ExitOK
	exitError       = cli.ExitError
	exitUsage       = cli.ExitUsage
	exitInterrupted = cli.ExitInterrupted
)

// signalContext is done at the first SIGINT or SIGTERM (cli.SignalContext).
var signalContext = cli.SignalContext

// command is one subcommand. run gets the arguments after the subcommand name
// and returns the exit status.
type command struct {
	name    string
	summary string // one line for `pacpfl help`
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands, listed by usage.
var commands = cli.Table{Width: 12, Head: "usage: pacpfl <subcommand> [flags]\n\nsubcommands:\n",
	Foot: "\nRun 'pacpfl <subcommand> -h' for a subcommand's flags.\n"}

// configError reports an unusable environment setting (PACPFL_SIMD,
// PACPFL_CPU_GHZ); a variable so tests can replay the start-up failure
// in-process.
var configError = func() error {
	if err := asm.ConfigError(); err != nil {
		return err
	}
	return bench.ConfigError()
}

func register(c *command) { commands.Add(cli.Command{Name: c.name, Summary: c.summary, Run: c.run}) }

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
	return commands.Run("pacpfl", args, stdout, stderr)
}

// newFlagSet is the flag set "pacpfl name" (cli.NewFlagSet): a bad flag
// prints its error and one line pointing at -h; -h prints the flags to
// stdout (parseFlags).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlagSet("pacpfl", name, stderr)
}

// flagsOf names Go fields by their flags for fieldUsage: renamed's names,
// else option.Kebab's (NewClients: --new-clients).
func flagsOf(renamed map[string]string) func(field string) string {
	return func(field string) string { return cmp.Or(renamed[field], option.Kebab(field)) }
}

// Flag parsing and help (package cli).
var (
	isHelp     = cli.IsHelp
	badUsage   = cli.BadUsage
	parseFlags = cli.Parse
)

func init() { commands.Add(commands.Help("pacpfl", "list the subcommands")) }
