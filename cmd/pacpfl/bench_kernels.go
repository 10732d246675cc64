package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// The kernels of `pacpfl bench` but lml: flags bound to a config of package
// bench/suite, then benchCmd.run.

func runBenchGemm(args []string, stdout, stderr io.Writer) int {
	cfg := suite.GEMMConfig{Sizes: slices.Clone(suite.DefaultGEMMSizes), Backends: linalg.Backends()}
	b := newBenchCmd("gemm", stdout, stderr, &cfg.Reps, suite.DefaultReps, &cfg.Levels)
	b.fs.Var((*intList)(&cfg.Sizes), "n", "comma-separated matrix orders")
	b.fs.Func("shapes", "comma-separated shapes MxNxK (C is M×N, the inner dimension K), measured after --n's "+
		"orders (with --shapes alone, only these)", func(v string) (err error) {
		cfg.Shapes, err = suite.ParseShapes(v)
		return err
	})
	b.fs.Var((*stringList)(&cfg.Backends), "backends",
		"comma-separated BLAS backends ("+strings.Join(linalg.KnownBackends(), ", ")+")")
	b.fs.IntVar(&cfg.Threads, "threads", 0, "threads of every backend (0: GOMAXPROCS)")
	return b.run(args, b.positive("reps"), func() (string, float64, error) {
		if len(cfg.Shapes) > 0 && !cli.Given(b.fs, "n") {
			cfg.Sizes = nil
		}
		sh, bytes := cfg.MemoryBytes()
		return "shape " + sh.String(), bytes, nil
	}, benchOf(suite.GEMM, &cfg))
}

func runBenchCholesky(args []string, stdout, stderr io.Writer) int {
	cfg := suite.CholeskyConfig{Sizes: slices.Clone(suite.DefaultCholeskySizes), Backends: cholesky.Backends()}
	b := newBenchCmd("cholesky", stdout, stderr, &cfg.Reps, suite.DefaultReps, &cfg.Levels)
	b.fs.Var((*intList)(&cfg.Sizes), "n", "comma-separated matrix orders")
	b.fs.Var((*stringList)(&cfg.Backends), "backends",
		"comma-separated LAPACK backends ("+strings.Join(cholesky.KnownBackends(), ", ")+")")
	b.fs.StringVar(&cfg.Op, "op", "potrf",
		"potrf (factorization, n³/3 flop) or potri (inverse from the factor, 2n³/3 flop)")
	b.fs.IntVar(&cfg.Threads, "threads", 0, "threads of every backend (0: GOMAXPROCS)")
	return b.run(args, b.positive("reps"), func() (string, float64, error) {
		if cfg.Op != "potrf" && cfg.Op != "potri" {
			return "", 0, usagef("--op %q: want potrf or potri", cfg.Op)
		}
		return fmt.Sprintf("--n %d", slices.Max(cfg.Sizes)), cfg.MemoryBytes(), nil
	}, benchOf(suite.Cholesky, &cfg))
}

func runBenchExp(args []string, stdout, stderr io.Writer) int {
	var cfg suite.ExpConfig
	b := newBenchCmd("exp", stdout, stderr, &cfg.Reps, suite.DefaultReps, &cfg.Levels)
	b.fs.IntVar(&cfg.N, "n", suite.DefaultExpN, "vector length")
	return b.run(args, b.positive("n", "reps"), func() (string, float64, error) {
		return fmt.Sprintf("--n %d", cfg.N), cfg.MemoryBytes(), nil
	}, benchOf(suite.Exp, &cfg))
}

func runBenchSEKernel(args []string, stdout, stderr io.Writer) int {
	cfg := suite.SEKernelConfig{Sizes: slices.Clone(suite.DefaultSEKernelSizes)}
	b := newBenchCmd("sekernel", stdout, stderr, &cfg.Reps, suite.DefaultReps, &cfg.Levels)
	b.fs.Var((*intList)(&cfg.Sizes), "m", "comma-separated numbers of points (the matrix is m×m)")
	return b.run(args, b.positive("reps"), func() (string, float64, error) {
		return fmt.Sprintf("--m %d", slices.Max(cfg.Sizes)), cfg.MemoryBytes(), nil
	}, benchOf(suite.SEKernel, &cfg))
}

func runBenchConv(args []string, stdout, stderr io.Writer) int {
	var cfg suite.ConvConfig
	b := newBenchCmd("conv", stdout, stderr, &cfg.Reps, suite.DefaultReps, nil)
	b.fs.IntVar(&cfg.Batch, "batch", suite.DefaultConvBatch, "images per batch")
	b.fs.IntVar(&cfg.Samples, "samples", suite.DefaultConvSamples, "weight samples L of the Bayesian step")
	b.fs.StringVar(&cfg.Backend, "backend", linalg.DefaultBackend, "BLAS backend for the products")
	return b.run(args, b.positive("reps", "batch", "samples"), func() (string, float64, error) {
		return fmt.Sprintf("--batch %d --samples %d", cfg.Batch, cfg.Samples), cfg.MemoryBytes(), nil
	}, benchOf(suite.Conv, &cfg))
}

func runBenchBNN(args []string, stdout, stderr io.Writer) int {
	var cfg suite.BNNConfig
	b := newBenchCmd("bnn", stdout, stderr, &cfg.Reps, suite.DefaultReps, nil)
	b.fs.StringVar(&cfg.Arch, "arch", lml.ArchBCNN, "network: bcnn or mlp")
	b.fs.IntVar(&cfg.K, "k", suite.DefaultBNNK, "prior particles k")
	b.fs.IntVar(&cfg.Samples, "samples", lml.DefaultBNNSamples, "weight samples L")
	b.fs.IntVar(&cfg.Batch, "batch", suite.DefaultConvBatch, "images per mini-batch b")
	return b.run(args, b.positive("reps", "k", "samples", "batch"), func() (string, float64, error) {
		return fmt.Sprintf("--k %d --samples %d --batch %d", cfg.K, cfg.Samples, cfg.Batch), cfg.MemoryBytes(), nil
	}, benchOf(suite.BNN, &cfg))
}

func runBenchRPC(args []string, stdout, stderr io.Writer) int {
	var cfg suite.RPCConfig
	b := newBenchCmd("rpc", stdout, stderr, &cfg.Reps, suite.DefaultReps, nil)
	b.fs.IntVar(&cfg.Updates, "updates", suite.DefaultRPCUpdates, "client updates per overhead measurement")
	b.fs.IntVar(&cfg.K, "k", suite.DefaultRPCK, "particles of the overhead and concurrency tests")
	b.fs.IntVar(&cfg.Clients, "clients", suite.DefaultRPCClients, "clients of the concurrency test")
	b.fs.IntVar(&cfg.Rounds, "rounds", suite.DefaultRPCRounds, "rounds of the concurrency test")
	b.fs.IntVar(&cfg.Transfers, "transfers", suite.DefaultRPCTransfers, "25 MB round trips per transfer measurement")
	b.fs.StringVar(&cfg.Method, "method", suite.RPCMethodPACPFL, "whose rounds to carry: "+suite.RPCMethodPACPFL+
		" (particle updates) or a peer method's Fit and Evaluate ("+strings.Join(suite.RPCPeerMethods, ", ")+")")
	return b.run(args, b.positive("reps", "updates", "k", "clients", "rounds", "transfers"),
		func() (string, float64, error) { return "", 0, nil }, benchOf(suite.RPC, &cfg))
}
