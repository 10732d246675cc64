package main

import (
	"fmt"
	"io"
	"strconv"

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
		fmt.Fprintf(stderr, "pacpfl bound kl-inverse: want two arguments Q and C, got %d\n%s\n", len(args)-1, boundUsage)
		return exitUsage
	}
	var v [2]float64
	for i, name := range []string{"Q", "C"} {
		x, err := strconv.ParseFloat(args[1+i], 64)
		if err != nil {
			return fail(stderr, "bound kl-inverse", usagef("%s = %q is not a number", name, args[1+i]))
		}
		v[i] = x
	}
	q, c := v[0], v[1]
	if !(q >= 0 && q <= 1) {
		return fail(stderr, "bound kl-inverse", usagef("Q = %v must lie in [0, 1] (an empirical risk)", q))
	}
	if !(c >= 0) {
		return fail(stderr, "bound kl-inverse", usagef("C = %v must be ≥ 0 (a complexity term)", c))
	}
	p, err := fl.KLInverse(q, c)
	if err != nil {
		return fail(stderr, "bound kl-inverse", err)
	}
	fmt.Fprintf(stdout, "%.15g\n", p)
	return exitOK
}
