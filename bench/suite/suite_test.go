package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// fixedPeak pins the clock so that the peak a benchmark computes is the one
// the test computes.
func fixedPeak(t *testing.T) bench.Peak {
	t.Setenv(bench.GHzEnvVar, "2.5")
	p, err := bench.MachinePeak()
	require.NoError(t, err)
	return p
}

// jsonKeys decodes each line of out and returns its keys.
func jsonKeys(t *testing.T, out string) []map[string]any {
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		rows = append(rows, r)
	}
	return rows
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes("20x30x40, 9X9x9")
	require.NoError(t, err)
	assert.Equal(t, []Shape{{20, 30, 40}, {9, 9, 9}}, got)
	assert.Equal(t, "20x30x40", got[0].String())
	assert.Equal(t, "9", got[1].String())
	assert.Equal(t, 2.0*20*30*40, got[0].Flops())
	for _, bad := range []string{"20x30", "20x0x5", "axbxc", ""} {
		_, err := ParseShapes(bad)
		assert.ErrorContains(t, err, "MxNxK", bad)
	}
}

func TestParseLevels(t *testing.T) {
	ls, err := ParseLevels(nil)
	require.NoError(t, err)
	assert.Nil(t, ls, "no list: the level in force, rows without a level")
	ls, err = ParseLevels([]string{"all"})
	require.NoError(t, err)
	assert.Equal(t, asm.Supported(), ls)
	_, err = ParseLevels([]string{"bogus"})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, `unknown SIMD level "bogus"`)
	_, err = ParseLevels([]string{"generic", "GENERIC"})
	assert.ErrorContains(t, err, "generic given twice")
	for _, l := range asm.ArchLevels() {
		if why := asm.Unsupported(l); why != "" {
			_, err = ParseLevels([]string{l.String()})
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, why)
		}
	}
}

// GEMM: one row per backend and shape, in order; the FLOP count 2mnk; the
// GFLOP/s and % of peak follow from the time; the table has the header and
// one line per row; JSON has the fields of a non-square shape.
func TestGEMMRows(t *testing.T) {
	peak := fixedPeak(t)
	var text bytes.Buffer
	cfg := GEMMConfig{Sizes: []int{8, 12}, Shapes: []Shape{{5, 6, 7}}, Backends: []string{"native", "gonum"}, Reps: 1}
	rows, err := GEMM(context.Background(), cfg, Output{W: &text})
	require.NoError(t, err)
	require.Len(t, rows, 6)
	shapes := []Shape{{8, 8, 8}, {12, 12, 12}, {5, 6, 7}}
	for i, r := range rows {
		sh := shapes[i/2]
		assert.Equal(t, []string{"native", "gonum"}[i%2], r.Backend)
		assert.Equal(t, sh, r.Shape)
		assert.Equal(t, "gemm", r.Kernel)
		assert.Equal(t, runtime.GOMAXPROCS(0), r.Threads)
		assert.Empty(t, r.Error)
		assert.Equal(t, 2*float64(sh.M)*float64(sh.N)*float64(sh.K), r.Flops)
		assert.InDelta(t, r.Flops/r.Seconds/1e9, r.GFLOPS, 1e-9*r.GFLOPS)
		assert.InDelta(t, 100*r.GFLOPS/peak.GFLOPS(), r.PercentPeak, 1e-9*r.PercentPeak)
	}
	assert.Equal(t, []int{5, 6, 7}, []int{rows[4].M, rows[4].N, rows[4].K})
	assert.Zero(t, rows[0].M, "a square shape has n alone")
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	require.Len(t, lines, 4+6)
	assert.Equal(t, peak.String(), lines[0])
	assert.Equal(t, "BLAS tuning: per-level defaults", lines[1])
	assert.Contains(t, lines[2], "threads: ")
	assert.Equal(t, []string{"n", "backend", "seconds", "GFLOP/s", "%", "peak"}, strings.Fields(lines[3]))
	assert.Equal(t, "5x6x7", strings.Fields(lines[8])[0])

	// A tuning in force is named in every row.
	l := asm.Current()
	require.NoError(t,
		linalg.SetTuning(&linalg.Tuning{Level: l, Blocking: linalg.DefaultBlocking(), Source: "test tuning"}))
	defer linalg.SetTuning(nil)
	var js bytes.Buffer
	cfg.Threads, cfg.Sizes = 1, nil
	_, err = GEMM(context.Background(), cfg, Output{W: &js, JSON: true})
	require.NoError(t, err)
	for _, r := range jsonKeys(t, js.String()) {
		if r["backend"] == "native" {
			assert.Equal(t, "test tuning", r["tuning"])
			assert.Greater(t, r["peak_gflops"], 0.0)
		}
		for _, k := range []string{"kernel", "n", "m", "k", "backend", "threads", "seconds", "gflops", "peak_gflops",
			"percent_peak", "tuning"} {
			assert.Contains(t, r, k)
		}
		assert.Equal(t, 1.0, r["threads"])
		assert.NotContains(t, r, "error")
	}
}

// Cholesky: n³/3 flop for potrf, twice that for potri; with levels, the
// native backend runs once per level (rows carry it), gonum once; the SIMD
// level and GOMAXPROCS are restored.
func TestCholeskyRows(t *testing.T) {
	assert.Equal(t, 1000.0/3, CholeskyFlops("potrf", 10))
	assert.Equal(t, 2000.0/3, CholeskyFlops("potri", 10))
	before, procs := asm.Current(), runtime.GOMAXPROCS(0)
	levels := asm.Supported()
	for _, op := range []string{"potrf", "potri"} {
		cfg := CholeskyConfig{Sizes: []int{9, 30}, Op: op, Backends: []string{"native", "gonum"}, Reps: 1, Threads: 1,
			Levels: levels}
		rows, err := Cholesky(context.Background(), cfg, Output{})
		require.NoError(t, err)
		require.Len(t, rows, 2*(len(levels)+1))
		for i, r := range rows {
			n := []int{9, 30}[i/(len(levels)+1)]
			assert.Equal(t, op, r.Op)
			assert.Equal(t, n, r.N)
			assert.Equal(t, CholeskyFlops(op, n), r.Flops)
			assert.Greater(t, r.GFLOPS, 0.0)
			if j := i % (len(levels) + 1); j < len(levels) {
				assert.Equal(t, "native", r.Backend)
				assert.Equal(t, levels[j].String(), r.Level)
			} else {
				assert.Equal(t, "gonum", r.Backend)
				assert.Empty(t, r.Level)
			}
		}
	}
	assert.Equal(t, before, asm.Current())
	assert.Equal(t, procs, runtime.GOMAXPROCS(0))
}

func TestBackendSweepRefusals(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		cfg  GEMMConfig
		want string
	}{
		{GEMMConfig{Sizes: []int{8}, Backends: []string{"native", "openblass"}}, `unknown backend "openblass"`},
		{GEMMConfig{Sizes: []int{8}, Backends: []string{"native", "native"}}, "twice"},
		{GEMMConfig{Sizes: []int{8}, Reps: -1}, "reps -1"},
		{GEMMConfig{Sizes: []int{8}, Threads: -1}, "threads -1"},
		{GEMMConfig{Shapes: []Shape{{0, 2, 2}}}, "shape dimension 0"},
	} {
		var out bytes.Buffer
		_, err := GEMM(ctx, c.cfg, Output{W: &out})
		assert.ErrorIs(t, err, ErrInvalid, c.want)
		assert.ErrorContains(t, err, c.want)
		assert.Empty(t, out.String(), "refused before the header")
	}
	_, err := Cholesky(ctx, CholeskyConfig{Sizes: []int{8}, Op: "getrf"}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "getrf")
}

func TestMemoryBytes(t *testing.T) {
	gemm := GEMMConfig{Sizes: []int{10}, Shapes: []Shape{{20, 30, 40}}, Backends: []string{"native", "gonum"}}
	sh, b := gemm.MemoryBytes()
	assert.Equal(t, Shape{20, 30, 40}, sh)
	assert.Equal(t, 8*(20*40+40*30+2*20*30.0), b)
	assert.Equal(t, 8*2*100.0*100, CholeskyConfig{Sizes: []int{50, 100}}.MemoryBytes())
	assert.Equal(t, 8*2*float64(DefaultExpN), ExpConfig{}.MemoryBytes())
	assert.Equal(t, 8*40.0*40, SEKernelConfig{Sizes: []int{40, 7}}.MemoryBytes())
	assert.Equal(t, float64(lml.WorkspaceBytes(5000, 1)), LMLConfig{}.MemoryBytes())
	assert.Equal(t, 8*(300*16+28*41*41.0), SparseLMLConfig{Ms: []int{300}, Inducing: []int{40, 8}}.MemoryBytes())
	assert.Zero(t, BNNConfig{Arch: "nope"}.MemoryBytes())
	assert.Greater(t, ConvConfig{}.MemoryBytes(), ConvConfig{Batch: 1}.MemoryBytes())
}

// Exp: one simd row per level, then math.Exp, whose speedup is 1.
func TestExpRows(t *testing.T) {
	levels := asm.Supported()
	var text bytes.Buffer
	rows, err := Exp(context.Background(), ExpConfig{N: 300, Reps: 1, Levels: levels}, Output{W: &text})
	require.NoError(t, err)
	require.Len(t, rows, len(levels)+1)
	for i, r := range rows[:len(levels)] {
		assert.Equal(t, "simd", r.Impl)
		assert.Equal(t, levels[i].String(), r.Level)
	}
	last := rows[len(levels)]
	assert.Equal(t, "math.Exp", last.Impl)
	assert.Empty(t, last.Level)
	assert.Equal(t, 1.0, last.Speedup)
	for _, r := range rows {
		assert.Equal(t, 300, r.N)
		assert.InDelta(t, 300/r.Seconds, r.ElementsPerS, 1e-9*r.ElementsPerS)
	}
	assert.Len(t, strings.Split(strings.TrimSpace(text.String()), "\n"), 2+len(rows))
	_, err = Exp(context.Background(), ExpConfig{N: -1}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

// SEKernel: per m, fused and sqdist+exp per level, then generic (speedup 1).
func TestSEKernelRows(t *testing.T) {
	var js bytes.Buffer
	rows, err := SEKernel(context.Background(), SEKernelConfig{Sizes: []int{5, 40}, Reps: 1},
		Output{W: &js, JSON: true})
	require.NoError(t, err)
	require.Len(t, rows, 6)
	for i, r := range rows {
		assert.Equal(t, []int{5, 40}[i/3], r.M)
		assert.Equal(t, []string{"fused", "sqdist+exp", "generic"}[i%3], r.Impl)
		assert.InDelta(t, float64(r.M*r.M)/r.Seconds, r.EntriesPerS, 1e-9*r.EntriesPerS)
	}
	assert.Equal(t, asm.Generic.String(), rows[2].Level)
	assert.Equal(t, 1.0, rows[2].Speedup)
	for _, r := range jsonKeys(t, js.String()) {
		assert.ElementsMatch(t, []string{"kernel", "impl", "level", "m", "seconds"}, slices.Collect(maps.Keys(r)))
	}
}

func TestConvRows(t *testing.T) {
	peak := fixedPeak(t)
	var text bytes.Buffer
	rows, err := Conv(context.Background(), ConvConfig{Batch: 2, Samples: 2, Reps: 1}, Output{W: &text})
	require.NoError(t, err)
	var names []string
	for _, r := range rows {
		names = append(names, r.Kernel)
		assert.Equal(t, 2, r.Batch)
		assert.Greater(t, r.Flops, 0.0)
		assert.InDelta(t, r.Flops/(r.MS/1e3)/1e9, r.GFLOPS, 1e-9*r.GFLOPS)
		assert.InDelta(t, 100*r.GFLOPS/peak.GFLOPS(), r.PercentPeak, 1e-9*r.PercentPeak)
	}
	assert.Equal(t, []string{"bcnn_fwd_bwd", "conv2_fwd_bwd", "bcnn_bayes_L2_stacked", "bcnn_bayes_L2_separate"}, names)
	assert.Contains(t, text.String(), "stacked / separate: ")
	_, err = Conv(context.Background(), ConvConfig{Backend: "nope"}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestBNNRows(t *testing.T) {
	rows, err := BNN(context.Background(), BNNConfig{Arch: lml.ArchMLP, K: 2, Samples: 2, Batch: 3, Reps: 1}, Output{})
	require.NoError(t, err)
	var names []string
	for _, r := range rows {
		names = append(names, r.Kernel)
		want := BNNRow{Kernel: r.Kernel, Arch: "mlp", Batch: 3, K: 2, Samples: 2, Threads: runtime.GOMAXPROCS(0),
			MS: r.MS}
		assert.Equal(t, want, r)
		assert.Greater(t, r.MS, 0.0)
	}
	assert.Equal(t, []string{"client_update_k2", "lml38_one_particle", "net_fwd_bwd_L2"}, names,
		"no BCNN step for an MLP")
	_, err = BNN(context.Background(), BNNConfig{Arch: "nope"}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

// LML: rows in the order (m, k, split, level); k·m³ FLOP; % of peak in the
// row and in JSON.
func TestLMLRows(t *testing.T) {
	peak := fixedPeak(t)
	var js bytes.Buffer
	cfg := LMLConfig{Ms: []int{7, 12}, Ks: []int{1, 3}, Splits: []lml.Split{lml.SplitAuto, lml.SplitBLAS}, Reps: 1}
	rows, err := LML(context.Background(), cfg, Output{W: &js, JSON: true})
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for i, r := range rows {
		assert.Equal(t, "gp_client_update", r.Kernel)
		assert.Equal(t, []int{7, 12}[i/4], r.M)
		assert.Equal(t, []int{1, 3}[i/2%2], r.K)
		assert.Equal(t, []string{"auto", "blas"}[i%2], r.Split)
		assert.Empty(t, r.Error)
		assert.InDelta(t, LMLFlops(r.M, r.K)/r.Seconds/1e9, r.GFLOPS, 1e-9*r.GFLOPS)
		assert.InDelta(t, 100*r.GFLOPS/peak.GFLOPS(), r.PercentPeak, 1e-9*r.PercentPeak)
	}
	assert.Equal(t, 3.0*12*12*12, LMLFlops(12, 3))
	for _, r := range jsonKeys(t, js.String()) {
		for _, k := range []string{"kernel", "m", "k", "split", "threads", "seconds", "gflops", "peak_gflops",
			"percent_peak", "tuning"} {
			assert.Contains(t, r, k)
		}
	}
}

// SparseLML: rows in the order (m, k, M); GFLOP = k·(4mM² + 20/3·M³)/1e9;
// the data's size 8·m·16 bytes; M above an m is refused.
func TestSparseLMLRows(t *testing.T) {
	cfg := SparseLMLConfig{Ms: []int{300, 700}, Ks: []int{1, 2}, Inducing: []int{16, 40}, Reps: 1}
	rows, err := SparseLML(context.Background(), cfg, Output{})
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for i, r := range rows {
		assert.Equal(t, "gp_sparse_bound", r.Kernel)
		assert.Equal(t, "sparse", r.GPInference)
		assert.Empty(t, r.Error)
		assert.Equal(t, []int{300, 700}[i/4], r.M)
		assert.Equal(t, []int{1, 2}[i/2%2], r.K)
		assert.Equal(t, []int{16, 40}[i%2], r.Inducing)
		m, M := float64(r.M), float64(r.Inducing)
		assert.InDelta(t, float64(r.K)*(4*m*M*M+20.0/3*M*M*M)/1e9, r.GFLOP, 1e-15)
		assert.InDelta(t, r.GFLOP/r.Seconds, r.GFLOPS, 1e-9*r.GFLOPS)
		assert.Equal(t, int64(8*r.M*16), r.DataBytes, "X (m×15) and y")
		assert.NotEmpty(t, r.CPU)
		if r.PeakRSSRow {
			// The row's workspace may fit in pages the process already
			// holds (freed by an earlier row): the growth can be 0.
			assert.Greater(t, r.PeakRSS, r.BeyondData)
			assert.GreaterOrEqual(t, r.BeyondData, int64(0))
		}
	}
	_, err = SparseLML(context.Background(), SparseLMLConfig{Ms: []int{50}, Inducing: []int{60}}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

// Validate refuses the largest M above the smallest m, the defaults
// standing in for nil fields.
func TestSparseLMLValidate(t *testing.T) {
	var fe *option.FieldError
	err := SparseLMLConfig{Ms: []int{700, 50}, Inducing: []int{16, 60}}.Validate()
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, []string{"Inducing", "Ms"}, fe.Fields)
	assert.Equal(t, []any{60, 50}, fe.Values)
	err = SparseLMLConfig{Ms: []int{500}}.Validate() // DefaultSparseInducing's 1024
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, []any{slices.Max(DefaultSparseInducing), 500}, fe.Values)
	assert.NoError(t, SparseLMLConfig{Inducing: []int{16}}.Validate())
	assert.NoError(t, SparseLMLConfig{Ms: []int{60}, Inducing: []int{60}}.Validate())
}

// RPC: every test over both transports, a figure and no errors.
func TestRPCRows(t *testing.T) {
	var text bytes.Buffer
	cfg := RPCConfig{Reps: 1, Updates: 3, Clients: 4, Rounds: 2, Transfers: 1}
	rows, err := RPC(context.Background(), cfg, Output{W: &text})
	require.NoError(t, err)
	require.Len(t, rows, 6)
	for i, r := range rows {
		assert.Equal(t, []string{"overhead", "transfer", "concurrent"}[i/2], r.Test)
		assert.Equal(t, []string{"plaintext", "tls"}[i%2], r.Transport)
		assert.Equal(t, 8*r.K*r.Dim, r.Bytes)
		assert.Zero(t, r.Errors)
		assert.Greater(t, r.PerUpdate+r.MBps+r.RoundMS, 0.0)
	}
	assert.Equal(t, 4, rows[4].Clients)
	assert.InDelta(t, rows[4].RoundMS/4, rows[4].PerClient, 1e-12)
	assert.Len(t, strings.Split(strings.TrimSpace(text.String()), "\n"), 2+6)
	_, err = RPC(context.Background(), RPCConfig{Clients: MaxRPCClients + 1}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

// RPC of a peer method: Fit, Evaluate, transfer and concurrency over both
// transports, a figure and no errors; pFedBayes's clients save their state
// and say so. An unknown method is refused.
func TestRPCPeerRows(t *testing.T) {
	for _, c := range []struct {
		method   string
		dim      int
		stateful bool
	}{{"fedavg", 79_510, false}, {"pfedbayes", 2 * 79_510, true}} {
		t.Run(c.method, func(t *testing.T) {
			var text bytes.Buffer
			cfg := RPCConfig{Reps: 1, Updates: 3, Clients: 4, Rounds: 2, Transfers: 1, Method: c.method}
			rows, err := RPC(context.Background(), cfg, Output{W: &text})
			require.NoError(t, err)
			require.Len(t, rows, 8)
			for i, r := range rows {
				test := []string{"fit", "evaluate", "transfer", "concurrent"}[i/2]
				assert.Equal(t, test, r.Test)
				assert.Equal(t, []string{"plaintext", "tls"}[i%2], r.Transport)
				assert.Equal(t, c.method, r.Method)
				assert.Equal(t, 1, r.K)
				assert.Equal(t, 8*r.Dim, r.Bytes)
				if test != "transfer" {
					assert.Equal(t, c.dim, r.Dim)
				}
				assert.Equal(t, c.stateful && test != "evaluate", r.StateFile)
				assert.Zero(t, r.Errors)
				assert.Greater(t, r.PerUpdate+r.MBps+r.RoundMS, 0.0)
			}
			assert.Equal(t, 4, rows[6].Clients)
			lines := strings.Split(strings.TrimSpace(text.String()), "\n")
			header := 4
			if c.stateful {
				header = 5
			}
			assert.Len(t, lines, header+8)
			assert.Contains(t, lines[header], "ms per Fit beyond")
			assert.Equal(t, c.stateful, strings.Contains(lines[header], "state file saved per update"))
		})
	}
	_, err := RPC(context.Background(), RPCConfig{Method: "fedsomething"}, Output{})
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestRowsErrAndCancel(t *testing.T) {
	assert.NoError(t, rowsErr([]ConvRow{{}}, func(r ConvRow) bool { return r.Error != "" }))
	assert.ErrorIs(t, rowsErr([]ConvRow{{}, {Error: "x"}}, func(r ConvRow) bool { return r.Error != "" }), ErrRowFailed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows, err := GEMM(ctx, GEMMConfig{Sizes: []int{8}, Reps: 1}, Output{})
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Empty(t, rows)
}

// A failed row is a line naming the error in every table; a good one ends
// with its figure.
func TestWriteText(t *testing.T) {
	for _, c := range []struct {
		row  interface{ WriteText(w io.Writer) }
		want string
	}{
		{BackendRow{Backend: "native", Level: "avx2", Shape: Shape{8, 8, 8}, Error: "boom"},
			"     8  native/avx2   error: boom\n"},
		{BackendRow{Backend: "gonum", Op: "potri", Shape: Shape{2, 3, 4}, Seconds: 1, GFLOPS: 2,
			Rate: Rate{PercentPeak: 3}},
			" 2x3x4  potri  gonum             1.000000       2.00     3.0%\n"},
		{ConvRow{Kernel: "k", Batch: 2, Error: "boom"}, "k                               2 error: boom\n"},
		{BNNRow{Kernel: "k", MS: 1.5}, "k                                1.50\n"},
		{LMLRow{M: 5, K: 1, Split: "auto", Error: "boom"}, "     5   1  auto             error: boom\n"},
		{SparseLMLRow{M: 5, K: 1, Inducing: 2, Error: "boom"}, "       5   1     2  error: boom\n"},
		{RPCRow{Test: "transfer", Transport: "tls", Clients: 1, K: 3, Dim: 2, Bytes: 2e6, MBps: 10, Errors: 2},
			"transfer    tls             1   3        2     2.00 MB  10 MB/s (both directions), 2 ERRORS\n"},
		{ExpRow{Impl: "math.Exp", Seconds: 1, ElementsPerS: 2, Speedup: 1},
			"math.Exp           1.000000              2    1.00x\n"},
		{SEKernelRow{Impl: "fused", Level: "avx2", M: 3, Seconds: 1, EntriesPerS: 9, Speedup: 2},
			"     3  fused/avx2             1.000000              9    2.00x\n"},
	} {
		var b bytes.Buffer
		c.row.WriteText(&b)
		assert.Equal(t, c.want, b.String())
	}
	assert.Equal(t, "-", formatRSS(0, true))
	assert.Equal(t, "1.500 GB*", formatRSS(1.5e9, false))
	assert.Equal(t, "2.0 MB", formatMB(2e6, true))
}
