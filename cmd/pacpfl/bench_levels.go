package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
)

// --levels, shared by `bench exp|sekernel|gemm|cholesky|lml`: the SIMD
// contenders run at each named level, alternated in one process (the level
// in force is restored afterwards), so that levels compare as ratios.

// levelsFlag registers --levels on fs.
func levelsFlag(fs *flag.FlagSet) *stringList {
	var l stringList
	fs.Var(&l, "levels", "comma-separated SIMD levels to alternate in this one process, or all (default: the current level)")
	return &l
}

// atLevel is c run at level l: named c.Name+"/"+l, its Setup setting the
// level first (the native BLAS follows: its kernel and cache blocks are
// those of the level in force).
func atLevel(c bench.Contender, l asm.Level) bench.Contender {
	setup := c.Setup
	c.Name += "/" + l.String()
	c.Setup = func() {
		asm.SetLevel(l)
		if setup != nil {
			setup()
		}
	}
	return c
}

// benchLevels resolves --levels: the current level when empty, every level
// this CPU and build support for "all", else each named level, which must be
// supported here (an error names the one that is not, and why).
func benchLevels(names stringList) ([]asm.Level, error) {
	if len(names) == 0 {
		return []asm.Level{asm.Current()}, nil
	}
	if len(names) == 1 && names[0] == "all" {
		return asm.Supported(), nil
	}
	var ls []asm.Level
	for _, name := range names {
		l, err := asm.ParseLevel(strings.ToLower(name))
		if err != nil {
			return nil, fmt.Errorf("--levels %s: unknown SIMD level %q (known: %s)", names.String(), name, levelNames(asm.ArchLevels()))
		}
		if why := asm.Unsupported(l); why != "" {
			return nil, fmt.Errorf("--levels %s: %s", names.String(), why)
		}
		if slices.Contains(ls, l) {
			return nil, fmt.Errorf("--levels %s: %s given twice", names.String(), l)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func levelNames(ls []asm.Level) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ", ")
}

// levelsPhrase completes "SIMD level": " avx2", or "s avx512, avx2 alternated".
func levelsPhrase(ls []asm.Level) string {
	if len(ls) == 1 {
		return " " + ls[0].String()
	}
	return "s " + levelNames(ls) + " alternated"
}

// perLevel replaces each contender of cs for which atLevels holds by one per
// level (atLevel), in order, when --levels was given (explicit); otherwise
// it returns cs as they are, run at the level in force.
func perLevel(cs []bench.Contender, levels []asm.Level, explicit bool, atLevels func(bench.Contender) bool) []bench.Contender {
	if !explicit {
		return cs
	}
	var out []bench.Contender
	for _, c := range cs {
		if !atLevels(c) {
			out = append(out, c)
			continue
		}
		for _, l := range levels {
			out = append(out, atLevel(c, l))
		}
	}
	return out
}

// splitLevel splits a contender name "native/avx512" into "native" and
// "avx512" (level "" when the name has none).
func splitLevel(name string) (base, level string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}
