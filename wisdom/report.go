package wisdom

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

// InForce is the native BLAS tuning a run uses, so that a report can say
// which kernel and blocks produced its figures and where they came from.
type InForce struct {
	Source     Source
	Kernel     string // the GEMM micro-kernel's asm name
	MC, KC, NC int    // the GEMM cache blocks
	SharedBMax int    // the shared-B limit; 0: linalg's rule, 1: never
	Panel      int    // the blocked Cholesky's panel width
}

// Current is the tuning in force now (linalg.CurrentTuning over the
// defaults of the SIMD level in force), applied from src.
func Current(src Source) InForce {
	b := linalg.NewNative(0).Blocking()
	t := InForce{Source: src, Kernel: asm.GemmKernelFor(asm.Current()).Name(), MC: b.MC, KC: b.KC, NC: b.NC,
		Panel: cholesky.Panel()}
	if lt := linalg.CurrentTuning(); lt != nil {
		t.SharedBMax = lt.SharedBMax
		if lt.Kernel != "" {
			t.Kernel = lt.Kernel
		}
	}
	return t
}

// String is t in one line: its source, then the kernel, blocks, shared-B
// rule and Cholesky panel.
func (t InForce) String() string {
	return fmt.Sprintf("%s: GEMM kernel %s, MC %d, KC %d, NC %d, shared-B %s; Cholesky panel %d",
		t.Source, t.Kernel, t.MC, t.KC, t.NC, sharedBText(t.SharedBMax), t.Panel)
}

// WriteBuild writes what a run's numbers depend on besides its input, one
// "label: value" line each: the Go version and platform, the SIMD levels
// (detected, chosen, supported), the compiled-in BLAS backends and the
// tuning in force, applied from src.
func WriteBuild(w io.Writer, src Source) {
	levels := make([]string, 0, len(asm.Supported()))
	for _, l := range asm.Supported() {
		levels = append(levels, l.String())
	}
	fmt.Fprintf(w, "go:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "simd:     detected %s, chosen %s (supported: %s; force with %s)\n",
		asm.Detected(), asm.Current(), strings.Join(levels, " "), asm.EnvVar)
	fmt.Fprintf(w, "backends: %s\n", strings.Join(linalg.Backends(), " "))
	fmt.Fprintf(w, "tuning:   %s\n", Current(src))
}

// sharedBText is a shared-B limit in words.
func sharedBText(limit int) string {
	switch limit {
	case 0:
		return "linalg's rule (C sides ≤ 512)"
	case 1:
		return "never"
	}
	return fmt.Sprintf("C sides ≤ %d", limit)
}

// Gain compares the defaults' GEMM rate with the tuned one at one size.
type Gain struct {
	N                    int
	Default, Tuned       float64 // GFLOP/s
	DefaultPct, TunedPct float64 // percent of the machine peak
	Speedup              float64 // Tuned / Default
}

// Gains are f's measured rates (Default and Tuned, by index) as Gains
// against a peak of peakGFLOPS.
func (f *File) Gains(peakGFLOPS float64) []Gain {
	g := make([]Gain, min(len(f.Default), len(f.Tuned)))
	for i := range g {
		d, t := f.Default[i].GFLOPS, f.Tuned[i].GFLOPS
		g[i] = Gain{N: f.Tuned[i].N, Default: d, Tuned: t, DefaultPct: 100 * d / peakGFLOPS,
			TunedPct: 100 * t / peakGFLOPS, Speedup: t / d}
	}
	return g
}

// WriteReport writes what Tune found in f, on a machine of the given peak:
// the CPU, the peak, the tuned values, the gain per size and f's Summary.
// A write error is w's to keep, as a checked writer does.
func (f *File) WriteReport(w io.Writer, peak bench.Peak) {
	g, panel := f.GEMM, "the default"
	if f.Cholesky.Panel != 0 {
		panel = fmt.Sprint(f.Cholesky.Panel)
	}
	fmt.Fprintf(w, "%s\n%s\n", f.CPU, peak)
	fmt.Fprintf(w, "tuned: GEMM kernel %s, MC %d, KC %d, NC %d, shared-B limit %s; Cholesky panel %s\n",
		g.Kernel, g.MC, g.KC, g.NC, sharedBText(g.SharedBMax), panel)
	for _, r := range f.Gains(peak.GFLOPS()) {
		fmt.Fprintf(w, "n = %d: defaults %.1f GFLOP/s (%.0f %% of peak), tuned %.1f (%.0f %%), %.3f×\n",
			r.N, r.Default, r.DefaultPct, r.Tuned, r.TunedPct, r.Speedup)
	}
	fmt.Fprintln(w, f.Summary)
}

// WriteFile writes f to path with Save, or, for path "-", its encoding to
// stdout.
func WriteFile(stdout io.Writer, path string, f *File) error {
	if path != "-" {
		return Save(path, f)
	}
	b, err := Encode(f)
	if err == nil {
		_, err = stdout.Write(b)
	}
	return err
}
