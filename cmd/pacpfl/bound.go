package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/fl"
)

func init() {
	register(&command{
		name:    "bound",
		summary: "PAC-Bayes bound arithmetic (pacpfl bound kl-inverse Q C)",
		run:     runBound,
	})
}

const boundUsage = `usage: pacpfl bound kl-inverse Q C

kl-inverse prints kl⁻¹(Q, C) = sup{p ∈ [Q, 1] : kl(Q‖p) ≤ C}, the largest
true risk compatible with an empirical risk Q ∈ [0, 1] and a complexity
C ≥ 0 (for McAllester's bound C = (KL(Q‖P) + ln(2√m/δ))/m), accurate to
1e-12 and never below the exact value.`

func runBound(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stdout, boundUsage)
		return exitOK
	}
	if len(args) == 0 || args[0] != "kl-inverse" {
		if len(args) > 0 {
			fmt.Fprintf(stderr, "pacpfl bound: unknown bound %q\n", args[0])
		}
		fmt.Fprintln(stderr, boundUsage)
		return exitUsage
	}
	if len(args) == 2 && isHelp(args[1]) {
		fmt.Fprintln(stdout, boundUsage)
		return exitOK
	}
	if len(args) != 3 {
		fmt.Fprintf(stderr, "pacpfl bound kl-inverse: want two arguments Q and C, got %d\n%s\n", len(args)-1,
			boundUsage)
		return exitUsage
	}
	p, err := fl.KLInverseArgs(args[1], args[2])
	if errors.As(err, new(*fl.ArgError)) {
		err = usageError{err}
	}
	if err != nil {
		return fail(stderr, "bound kl-inverse", err)
	}
	fmt.Fprintf(stdout, "%.15g\n", p)
	return exitOK
}
