// Package cli is the subcommand machinery of the pacpfl command: tables of
// subcommands with their usage listing, flag sets whose errors point at -h
// instead of printing every flag, help printed to standard output (help
// asked for is output, not a diagnostic), the exit statuses, a writer that
// remembers a failed write and the context of SIGINT and SIGTERM.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitError = 1 // the command ran and failed (bad data file, numerical failure, …)
	ExitUsage = 2 // the command line or the environment is wrong
	// ExitInterrupted: stopped by SIGINT or SIGTERM before the end (128 +
	// SIGINT, what a shell reports for a program the signal killed).
	ExitInterrupted = 130
)

// Command is one subcommand. Run gets the arguments after its name and
// returns the exit status.
type Command struct {
	Name    string
	Summary string // its line in the table's usage
	Run     func(args []string, stdout, stderr io.Writer) int
}

// Table is a set of subcommands by name, listed in its usage between Head
// and Foot as "  name summary" lines, names padded to Width.
type Table struct {
	Head, Foot string
	Width      int
	cmds       map[string]Command
}

// Add adds c. Two commands of one name are a programming error: Add panics.
func (t *Table) Add(c Command) {
	if _, dup := t.cmds[c.Name]; dup {
		panic("cli: duplicate subcommand " + c.Name)
	}
	if t.cmds == nil {
		t.cmds = map[string]Command{}
	}
	t.cmds[c.Name] = c
}

// Lookup is the command called name.
func (t *Table) Lookup(name string) (Command, bool) {
	c, ok := t.cmds[name]
	return c, ok
}

// Names are the commands' names in order.
func (t *Table) Names() []string { return slices.Sorted(maps.Keys(t.cmds)) }

// WriteUsage writes the usage: Head, a line per command, Foot.
func (t *Table) WriteUsage(w io.Writer) {
	fmt.Fprint(w, t.Head)
	for _, n := range t.Names() {
		fmt.Fprintf(w, "  %-*s %s\n", t.Width, n, t.cmds[n].Summary)
	}
	fmt.Fprint(w, t.Foot)
}

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// Stderr is the standard error handed to a command: it also knows stdout,
// where the help of the command's flag sets goes.
type Stderr struct {
	io.Writer
	Stdout io.Writer
}

// NewFlagSet is the flag set "pacpfl name" (prog names the program), which
// reports errors to stderr without exiting; Parse prints its help.
func NewFlagSet(prog, name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// PrintFlagHelp prints the usage line and the flags of fs to w.
func PrintFlagHelp(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: %s [flags]\n\nflags:\n", fs.Name())
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// BadUsage ends a usage error on fs with the pointer to its help.
func BadUsage(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "run '%s -h' for the flags\n", fs.Name())
}

// Parse parses args into fs and returns the exit status to use if parsing
// failed (ok false): ExitOK for -h, after the flag list went to stdout (the
// Stdout of a Stderr output, else the output itself), ExitUsage for a bad
// flag, after one line pointing at -h (a whole flag list would scroll the
// error away). Positional arguments are refused unless allowArgs.
func Parse(fs *flag.FlagSet, args []string, allowArgs bool) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			w := fs.Output()
			if s, ok := w.(*Stderr); ok {
				w = s.Stdout
			}
			PrintFlagHelp(fs, w)
			return ExitOK, false
		}
		BadUsage(fs) // the flag package printed the error itself
		return ExitUsage, false
	}
	if !allowArgs && fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		BadUsage(fs)
		return ExitUsage, false
	}
	return ExitOK, true
}

// Given reports whether the flag name was set on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// SetDefault changes a registered flag's default: its value and what -h
// shows. A command sharing flags with another uses it where its defaults
// differ; a value the flag refuses is a programming error and panics.
func SetDefault(fs *flag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	if err := f.Value.Set(value); err != nil {
		panic(fs.Name() + ": bad default for --" + name + ": " + err.Error())
	}
	f.DefValue = value
}

// CheckedWriter remembers the first write error (a full disk, a closed
// pipe), so that a command whose output was lost does not exit 0.
type CheckedWriter struct {
	W   io.Writer
	Err error
}

// Write writes p to W unless a write failed before, which it repeats.
func (c *CheckedWriter) Write(p []byte) (int, error) {
	if c.Err != nil {
		return 0, c.Err
	}
	n, err := c.W.Write(p)
	if err != nil {
		c.Err = err
	}
	return n, err
}

// SignalContext is done at the first SIGINT or SIGTERM, which a run answers
// by stopping at its next round; the signal's default handling is restored
// then, so that a second Ctrl-C ends a run stuck inside a long round at
// once.
func SignalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// Run runs the command args[0] of t on args[1:] for the program prog: no
// command is a usage error after the usage; a help argument runs the
// command "help"; an unknown one is a usage error. The command's stdout is
// a CheckedWriter: output that could not be written (a full disk, a closed
// pipe) is a failure (ExitError), whatever the command thought of its work.
func (t *Table) Run(prog string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		t.WriteUsage(stderr)
		return ExitUsage
	}
	name := args[0]
	if IsHelp(name) {
		name = "help"
	}
	c, ok := t.Lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown subcommand %q\nrun '%s help' for the subcommands\n", prog, args[0], prog)
		return ExitUsage
	}
	out := &CheckedWriter{W: stdout}
	st := c.Run(args[1:], out, &Stderr{Writer: stderr, Stdout: out})
	if out.Err != nil && st == ExitOK {
		fmt.Fprintf(stderr, "%s %s: writing standard output: %v\n", prog, name, out.Err)
		return ExitError
	}
	return st
}

// Help is the command "help" of t for the program prog: t's usage, or
// "help NAME": the flags of the command NAME.
func (t *Table) Help(prog, summary string) Command {
	return Command{Name: "help", Summary: summary, Run: func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 && !IsHelp(args[0]) {
			if c, ok := t.Lookup(args[0]); ok {
				return c.Run([]string{"-h"}, stdout, stderr)
			}
			fmt.Fprintf(stderr, "%s help: unknown subcommand %q\n", prog, args[0])
			return ExitUsage
		}
		t.WriteUsage(stdout)
		return ExitOK
	}}
}
