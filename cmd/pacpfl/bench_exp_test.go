package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchExpJSON(t *testing.T) {
	st, out, errs := runCLI("bench", "exp", "--n", "1000", "--reps", "1", "--json")
	require.Equal(t, exitOK, st, errs)
	impls := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "exp", r["kernel"])
		assert.Equal(t, 1000.0, r["n"])
		assert.Greater(t, r["seconds"].(float64), 0.0)
		assert.Greater(t, r["elements_per_s"].(float64), 0.0)
		impls[r["impl"].(string)] = true
	}
	assert.Equal(t, map[string]bool{"simd": true, "math.Exp": true}, impls)
}

func TestBenchSEKernelJSON(t *testing.T) {
	st, out, errs := runCLI("bench", "sekernel", "--m", "5,40", "--reps", "1", "--json")
	require.Equal(t, exitOK, st, errs)
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "sekernel", r["kernel"])
		assert.Contains(t, []any{5.0, 40.0}, r["m"])
		assert.Greater(t, r["seconds"].(float64), 0.0)
		seen[r["impl"].(string)]++
	}
	assert.Equal(t, map[string]int{"fused": 2, "sqdist+exp": 2, "generic": 2}, seen)
}

func TestBenchExpTableAndErrors(t *testing.T) {
	st, out, errs := runCLI("bench", "exp", "--n", "100", "--reps", "1")
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "math.Exp")
	assert.Contains(t, out, "simd")
	st, out, errs = runCLI("bench", "sekernel", "--m", "7", "--reps", "1")
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "sqdist+exp")
	st, _, errs = runCLI("bench", "exp", "--n", "0")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--n 0")
	st, _, _ = runCLI("bench", "sekernel", "--m", "x")
	assert.Equal(t, exitUsage, st)
	st, _, errs = runCLI("bench", "sekernel", "--reps", "0")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--reps 0")
}

// TestBenchLevels: --levels all runs the SIMD contenders once per level this
// CPU supports (skipping none silently), in JSON and in the table; a level
// this CPU cannot run, an unknown one or a repeated one is a usage error
// naming it; the level in force is restored afterwards.
func TestBenchLevels(t *testing.T) {
	before := asm.Current()
	want := map[string]int{}
	for _, l := range asm.Supported() {
		want[l.String()] = 1
	}
	st, out, errs := runCLI("bench", "exp", "--n", "300", "--reps", "1", "--levels", "all", "--json")
	require.Equal(t, exitOK, st, errs)
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		if r["impl"] == "simd" {
			got[r["level"].(string)]++
		}
	}
	assert.Equal(t, want, got)
	st, out, errs = runCLI("bench", "sekernel", "--m", "9", "--reps", "1", "--levels", "all")
	require.Equal(t, exitOK, st, errs)
	for l := range want {
		assert.Contains(t, out, "fused/"+l)
		assert.Contains(t, out, "sqdist+exp/"+l)
	}
	assert.Equal(t, before, asm.Current())
	for _, bad := range []string{"bogus", "generic,generic"} {
		st, _, errs = runCLI("bench", "exp", "--n", "10", "--levels", bad)
		assert.Equal(t, exitUsage, st, bad)
		assert.Contains(t, errs, "--levels "+bad)
	}
	for _, l := range asm.ArchLevels() {
		if why := asm.Unsupported(l); why != "" {
			st, _, errs = runCLI("bench", "sekernel", "--m", "9", "--levels", l.String())
			assert.Equal(t, exitUsage, st)
			assert.Contains(t, errs, why)
		}
	}
}

// --levels on the BLAS benchmarks: gemm and cholesky run the native backend
// once per level (rows native/<level>, JSON "level"), other backends once;
// lml runs each split at each level; the level in force is restored; a bad
// level is a usage error naming it.
func TestBenchLevelsBLAS(t *testing.T) {
	before := asm.Current()
	levels := asm.Supported()
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.String()
	}
	list := strings.Join(names, ",")
	st, out, errs := runCLI("bench", "gemm", "--n", "20", "--reps", "1", "--backends", "native,gonum", "--levels", list,
		"--json")
	require.Equal(t, exitOK, st, errs)
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		lv, _ := r["level"].(string)
		got[r["backend"].(string)+"/"+lv]++
		assert.Greater(t, r["gflops"].(float64), 0.0)
	}
	want := map[string]int{"gonum/": 1}
	for _, n := range names {
		want["native/"+n] = 1
	}
	assert.Equal(t, want, got)
	st, out, errs = runCLI("bench", "cholesky", "--n", "30", "--reps", "1", "--backends", "native", "--levels", list)
	require.Equal(t, exitOK, st, errs)
	for _, n := range names {
		assert.Regexp(t, `(?m)^\s+30  potrf\s+native/`+n+`\s`, out)
	}
	assert.Contains(t, out, "native at SIMD level")
	st, out, errs = runCLI("bench", "lml", "--m", "12", "--k", "1", "--reps", "1", "--split", "auto,blas", "--levels",
		list, "--json")
	require.Equal(t, exitOK, st, errs)
	got = map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.NotContains(t, r, "error")
		got[r["split"].(string)+"/"+r["level"].(string)]++
	}
	want = map[string]int{}
	for _, n := range names {
		want["auto/"+n], want["blas/"+n] = 1, 1
	}
	assert.Equal(t, want, got)
	assert.Equal(t, before, asm.Current())
	for _, cmd := range []string{"gemm", "cholesky", "lml"} {
		st, _, errs = runCLI("bench", cmd, "--levels", "bogus")
		assert.Equal(t, exitUsage, st, cmd)
		assert.Contains(t, errs, "--levels bogus", cmd)
	}
}
