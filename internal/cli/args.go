package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"strings"
)

// FlagValue is the value that args, not yet parsed, give the flag name
// at its first occurrence (-name v, --name v, -name=v or --name=v), for a
// command whose flags depend on it; ok is false when args, up to a "--"
// that ends the flags, do not give it one. Words that do not start with a
// dash are skipped as values of other flags.
func FlagValue(args []string, name string) (value string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return "", false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		n, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case n != name:
			continue
		case hasValue:
			return v, true
		case i+1 < len(args):
			return args[i+1], true
		}
		return "", false
	}
	return "", false
}

// ValuesHash is the SHA-256, in hex, of a line "name=value" for every flag
// of fs, given or default, in name order, but those skip leaves out: what
// a run was configured with, to recognise the same configuration later.
func ValuesHash(fs *flag.FlagSet, skip func(name string) bool) string {
	h := sha256.New()
	fs.VisitAll(func(f *flag.Flag) {
		if !skip(f.Name) {
			fmt.Fprintf(h, "%s=%s\n", f.Name, f.Value.String())
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}

// RunAction runs a command whose one action is action (pacpfl gp eval):
// without arguments it prints the usage to stderr (ExitUsage); action runs
// run on the arguments after it; a help argument prints the usage, a blank
// line and run's own help to stdout; any other argument is a usage error
// naming prog.
func RunAction(prog, action string, usage func(io.Writer), run func(args []string, stdout, stderr io.Writer) int,
	args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr)
		return ExitUsage
	case args[0] == action:
		return run(args[1:], stdout, stderr)
	case IsHelp(args[0]):
		usage(stdout)
		fmt.Fprintln(stdout)
		return run([]string{"-h"}, stdout, stderr)
	}
	fmt.Fprintf(stderr, "%s: unknown action %q\n", prog, args[0])
	usage(stderr)
	return ExitUsage
}
