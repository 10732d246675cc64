package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/wisdom"
)

// Version is the pacpfl release; set with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, Go version, platform, SIMD levels and compiled-in BLAS backends",
		run: func(args []string, stdout, stderr io.Writer) int {
			fs := newFlagSet("version", stderr)
			if st, ok := parseFlags(fs, args, false); !ok {
				return st
			}
			fmt.Fprintf(stdout, "pacpfl %s\n", Version)
			fmt.Fprintf(stdout, "go:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(stdout, "simd:     detected %s, chosen %s (supported: %s; force with %s)\n",
				asm.Detected(), asm.Current(), levelList(asm.Supported()), asm.EnvVar)
			fmt.Fprintf(stdout, "backends: %s\n", strings.Join(linalg.Backends(), " "))
			fmt.Fprintf(stdout, "tuning:   %s\n", wisdom.Current(wisdomSource))
			return exitOK
		},
	})
}

func levelList(ls []asm.Level) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, " ")
}
