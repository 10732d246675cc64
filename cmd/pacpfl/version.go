package main

import (
	"fmt"
	"io"

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
			wisdom.WriteBuild(stdout, wisdomSource)
			return exitOK
		},
	})
}
