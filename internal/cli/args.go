package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
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
