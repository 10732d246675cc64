package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// The kernels of `pacpfl bench` but lml: flags → a config of package
// bench/suite → runSuite.

func runBenchGemm(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench gemm", stderr)
	sizes, backends := intList(slices.Clone(suite.DefaultGEMMSizes)), stringList(linalg.Backends())
	fs.Var(&sizes, "n", "comma-separated matrix orders")
	var shapes []suite.Shape
	fs.Func("shapes", "comma-separated shapes MxNxK (C is M×N, the inner dimension K), measured after --n's orders "+
		"(with --shapes alone, only these)", func(v string) (err error) { shapes, err = suite.ParseShapes(v); return err })
	fs.Var(&backends, "backends", "comma-separated BLAS backends ("+strings.Join(linalg.KnownBackends(), ", ")+")")
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	threads := fs.Int("threads", 0, "threads of every backend (0: GOMAXPROCS)")
	levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := checkBench(fs, "reps")
	cfg := suite.GEMMConfig{Sizes: sizes, Shapes: shapes, Backends: backends, Reps: *reps, Threads: *threads,
		Levels: levels}
	if len(shapes) > 0 && !flagGiven(fs, "n") {
		cfg.Sizes = nil
	}
	sh, bytes := cfg.MemoryBytes()
	return runSuite(stdout, stderr, "bench gemm", *asJSON, err, "shape "+sh.String(), bytes, suite.GEMM, cfg)
}

func runBenchCholesky(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench cholesky", stderr)
	sizes, backends := intList(slices.Clone(suite.DefaultCholeskySizes)), stringList(cholesky.Backends())
	fs.Var(&sizes, "n", "comma-separated matrix orders")
	fs.Var(&backends, "backends", "comma-separated LAPACK backends ("+strings.Join(cholesky.KnownBackends(), ", ")+")")
	op := fs.String("op", "potrf", "potrf (factorization, n³/3 flop) or potri (inverse from the factor, 2n³/3 flop)")
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	threads := fs.Int("threads", 0, "threads of every backend (0: GOMAXPROCS)")
	levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := checkBench(fs, "reps")
	if err == nil && *op != "potrf" && *op != "potri" {
		err = usagef("--op %q: want potrf or potri", *op)
	}
	cfg := suite.CholeskyConfig{Sizes: sizes, Op: *op, Backends: backends, Reps: *reps, Threads: *threads, Levels: levels}
	what := fmt.Sprintf("--n %d", slices.Max(sizes))
	return runSuite(stdout, stderr, "bench cholesky", *asJSON, err, what, cfg.MemoryBytes(), suite.Cholesky, cfg)
}

func runBenchExp(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench exp", stderr)
	n := fs.Int("n", suite.DefaultExpN, "vector length")
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := checkBench(fs, "n", "reps")
	cfg := suite.ExpConfig{N: *n, Reps: *reps, Levels: levels}
	what := fmt.Sprintf("--n %d", *n)
	return runSuite(stdout, stderr, "bench exp", *asJSON, err, what, cfg.MemoryBytes(), suite.Exp, cfg)
}

func runBenchSEKernel(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench sekernel", stderr)
	sizes := intList(slices.Clone(suite.DefaultSEKernelSizes))
	fs.Var(&sizes, "m", "comma-separated numbers of points (the matrix is m×m)")
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := checkBench(fs, "reps")
	cfg := suite.SEKernelConfig{Sizes: sizes, Reps: *reps, Levels: levels}
	what := fmt.Sprintf("--m %d", slices.Max(sizes))
	return runSuite(stdout, stderr, "bench sekernel", *asJSON, err, what, cfg.MemoryBytes(), suite.SEKernel, cfg)
}

func runBenchConv(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench conv", stderr)
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	batch := fs.Int("batch", suite.DefaultConvBatch, "images per batch")
	samples := fs.Int("samples", suite.DefaultConvSamples, "weight samples L of the Bayesian step")
	backend := fs.String("backend", linalg.DefaultBackend, "BLAS backend for the products")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	_, err := checkBench(fs, "reps", "batch", "samples")
	cfg := suite.ConvConfig{Batch: *batch, Samples: *samples, Backend: *backend, Reps: *reps}
	what := fmt.Sprintf("--batch %d --samples %d", *batch, *samples)
	return runSuite(stdout, stderr, "bench conv", *asJSON, err, what, cfg.MemoryBytes(), suite.Conv, cfg)
}

func runBenchBNN(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench bnn", stderr)
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	arch := fs.String("arch", lml.ArchBCNN, "network: bcnn or mlp")
	k := fs.Int("k", suite.DefaultBNNK, "prior particles k")
	samples := fs.Int("samples", lml.DefaultBNNSamples, "weight samples L")
	batch := fs.Int("batch", suite.DefaultConvBatch, "images per mini-batch b")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	_, err := checkBench(fs, "reps", "k", "samples", "batch")
	cfg := suite.BNNConfig{Arch: *arch, K: *k, Samples: *samples, Batch: *batch, Reps: *reps}
	what := fmt.Sprintf("--k %d --samples %d --batch %d", *k, *samples, *batch)
	return runSuite(stdout, stderr, "bench bnn", *asJSON, err, what, cfg.MemoryBytes(), suite.BNN, cfg)
}

func runBenchRPC(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench rpc", stderr)
	asJSON, reps := benchFlags(fs, suite.DefaultReps)
	updates := fs.Int("updates", suite.DefaultRPCUpdates, "client updates per overhead measurement")
	k := fs.Int("k", suite.DefaultRPCK, "particles of the overhead and concurrency tests")
	clients := fs.Int("clients", suite.DefaultRPCClients, "clients of the concurrency test")
	rounds := fs.Int("rounds", suite.DefaultRPCRounds, "rounds of the concurrency test")
	transfers := fs.Int("transfers", suite.DefaultRPCTransfers, "25 MB round trips per transfer measurement")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	_, err := checkBench(fs, "reps", "updates", "k", "clients", "rounds", "transfers")
	cfg := suite.RPCConfig{Reps: *reps, Updates: *updates, K: *k, Clients: *clients, Rounds: *rounds,
		Transfers: *transfers}
	return runSuite(stdout, stderr, "bench rpc", *asJSON, err, "", 0, suite.RPC, cfg)
}
