package fl

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/option"
)

// A short end-to-end PAC-PFL run: the mean training LML improves, every
// metric is finite, and the bounds are computed and consistent.
func TestPACPFLEndToEnd(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(11))
	if err != nil {
		t.Fatal(err)
	}
	g := smallGP()
	o := PACPFLOptions{
		Server: Config{K: 2, Rounds: 150, ClientsPerRound: 4, LR: 1e-2, Tau: 0.5, Seed: 3},
		SigmaP: 0.5,
		Bounds: BoundOptions{A: -2, B: 2, Delta: 0.05, PriorSamples: 4, FuncSamples: 20, Seed: 1,
			Learned: &LearnedBoundOptions{Samples: 16}},
	}
	r, err := RunPACPFL(ds, g, o, MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Train.MeanLML
	first, last := Mean(h[:20]), Mean(h[len(h)-20:])
	if !(last > first+1) {
		t.Fatalf("training LML %v → %v: no improvement", first, last)
	}
	for _, v := range []float64{r.Existing.MeanRSMSE, r.Existing.MeanCE, r.New.MeanRSMSE, r.New.MeanCE} {
		if math.IsNaN(v) || v < 0 {
			t.Fatalf("bad metric %v", v)
		}
	}
	if r.Existing.MeanRSMSE > 1.2 {
		t.Fatalf("existing RSMSE %v after training", r.Existing.MeanRSMSE)
	}
	b := r.Bounds
	if b == nil || math.IsNaN(b.Server) || math.IsNaN(b.NewClient) || !(b.NewClient >= b.Server-1e-9) {
		t.Fatalf("bounds %+v (the new-client bound is never tighter, docs/math.md §1.3)", b)
	}
	// The bound for the trained hyper-posterior depends on the training
	// run; the one at 𝒬* does not.
	lb := r.Learned
	if lb == nil || math.IsNaN(lb.Server) || lb.KL <= 0 {
		t.Fatalf("learned bound %+v (%s)", lb, r.LearnedUnavailable)
	}
	o.Server.Rounds = 1
	r1, err := RunPACPFL(ds, g, o, MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Bounds.Server != b.Server || r1.Learned.Server == lb.Server || r1.Learned.EmpiricalTerm == lb.EmpiricalTerm {
		t.Fatalf("1 vs 150 rounds: 𝒬* bound %v vs %v (must agree), trained bound %v vs %v (must differ)",
			r1.Bounds.Server, b.Server, r1.Learned.Server, lb.Server)
	}
	if !(lb.EmpiricalTerm < r1.Learned.EmpiricalTerm) {
		t.Fatalf("training did not lower the empirical term of the trained bound: %v after 1 round, %v after 150",
			r1.Learned.EmpiricalTerm, lb.EmpiricalTerm)
	}
	// Plain ascent has unbounded steps: no finite DP level, no bound.
	o.Server.Optimizer = "sgd"
	r2, err := RunPACPFL(ds, g, o, MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Learned != nil || r2.LearnedUnavailable == "" {
		t.Fatalf("sgd run reported a trained bound %+v", r2.Learned)
	}
}

// β = √m: the β(b−a)²/8 terms shrink, so both bounds at 𝒬* drop, and
// training and prediction run on the tempered objective.
func TestTemperatureSqrt(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(14))
	if err != nil {
		t.Fatal(err)
	}
	g := smallGP()
	o := PACPFLOptions{
		Server: Config{K: 2, Rounds: 40, ClientsPerRound: 4, LR: 1e-2, Tau: 0.5, Seed: 3},
		SigmaP: 0.5,
		Bounds: BoundOptions{A: -2, B: 2, Delta: 0.05, PriorSamples: 4, FuncSamples: 20, Seed: 1},
	}
	rm, err := RunPACPFL(ds, g, o, MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	o.Beta = Temperature{Rule: TemperatureSqrt}
	rs, err := RunPACPFL(ds, g, o, MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	if !(rs.Bounds.Server < rm.Bounds.Server) || !(rs.Bounds.NewClient < rm.Bounds.NewClient) {
		t.Fatalf("β = √m bounds %v / %v not below β = m's %v / %v", rs.Bounds.Server, rs.Bounds.NewClient,
			rm.Bounds.Server, rm.Bounds.NewClient)
	}
	if slices.Equal(rs.Train.Particles, rm.Train.Particles) || rs.Existing.MeanRSMSE == rm.Existing.MeanRSMSE {
		t.Fatal("β = √m trained or predicted exactly like β = m")
	}
}

// Clients whose temperatures differ have no common β: a FieldError of the
// options' Beta.
func TestTemperatureCommon(t *testing.T) {
	if b, err := (Temperature{Rule: TemperatureValue, Value: 3}).Common([]int{4, 9}); b != 3 || err != nil {
		t.Errorf("a number: %v, %v", b, err)
	}
	_, err := (Temperature{Rule: TemperatureSqrt}).Common([]int{4, 9})
	var fe *option.FieldError
	if !errors.As(err, &fe) || !slices.Equal(fe.Fields, []string{"Beta"}) ||
		!strings.HasSuffix(fe.Message("-b"), "pass a number to -b") {
		t.Errorf("β = √m on m_i 4 and 9: %v", err)
	}
}

func TestBaselinesRun(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(12))
	if err != nil {
		t.Fatal(err)
	}
	g := smallGP()
	v, err := RunVanilla(ds, g, VanillaOptions{Steps: 30, LR: 1e-2, InitSigma: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := RunPooled(ds, g, PooledOptions{Points: 40, Steps: 30, LR: 1e-2, InitSigma: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*MethodResult{v, p} {
		if len(r.Existing.RSMSE) != len(ds.Existing) || len(r.New.RSMSE) != len(ds.New) || math.IsNaN(r.New.MeanCE) {
			t.Fatalf("%s: %+v", r.Method, r)
		}
	}
	if p.Existing.MeanRSMSE <= 0 || v.Existing.MeanRSMSE <= 0 {
		t.Fatal("zero error")
	}
}

// The whole GP pipeline (training with concurrent clients, prediction on
// all cores) gives bit-identical metrics whatever GOMAXPROCS is.
func TestPACPFLDeterministicAcrossGOMAXPROCS(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(13))
	if err != nil {
		t.Fatal(err)
	}
	run := func(procs int) *MethodResult {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		o := PACPFLOptions{Server: Config{K: 3, Rounds: 30, ClientsPerRound: 5, Batch: 6, LR: 1e-2, Tau: 0.5, Seed: 4},
			SigmaP: 0.5}
		r, err := RunPACPFL(ds, smallGP(), o, MethodPACPFL)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(1), run(2)
	if !slices.Equal(a.Train.Particles, b.Train.Particles) || !slices.Equal(a.Existing.RSMSE, b.Existing.RSMSE) ||
		!slices.Equal(a.New.CE, b.New.CE) {
		t.Fatal("results differ between GOMAXPROCS 1 and 2")
	}
}

// pFedGP's zero mean: the mean network stays exactly zero through training.
func TestZeroMeanStaysZero(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(14))
	if err != nil {
		t.Fatal(err)
	}
	g := smallGP()
	o := PACPFLOptions{Server: Config{K: 1, Rounds: 20, ClientsPerRound: 3, LR: 1e-2, Tau: 0.5, Seed: 4}, SigmaP: 10,
		InitSigma: 0.5, ZeroMean: true}
	r, err := RunPACPFL(ds, g, o, MethodPFedGP)
	if err != nil {
		t.Fatal(err)
	}
	nm := g.meanParams()
	if nm == 0 || nm >= g.Dim() {
		t.Fatalf("mean network has %d of %d parameters", nm, g.Dim())
	}
	for i, v := range r.Train.Particles[:nm] {
		if v != 0 {
			t.Fatalf("mean parameter %d = %v after training", i, v)
		}
	}
	moved := false
	for _, v := range r.Train.Particles[nm:] {
		moved = moved || v != 0
	}
	if !moved || g.FreezeMean {
		t.Fatal("kernel parameters did not move, or the caller's model was modified")
	}
	mean, _, _ := g.priorMoments(r.Train.Particles, ds.New[0].X)
	for _, v := range mean {
		if v != 0 {
			t.Fatalf("prior mean %v, want 0", v)
		}
	}
}

func TestBaselinesRefuseOptionsThatCannotWork(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(2))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGPModel(ds.D)
	v := DefaultVanillaOptions()
	v.Steps = 0
	if _, err := RunVanilla(ds, g, v); err == nil || !strings.Contains(err.Error(), "Adam steps") {
		t.Errorf("Vanilla with 0 steps: %v", err)
	}
	v = DefaultVanillaOptions()
	v.LR = math.NaN()
	if _, err := RunVanilla(ds, g, v); err == nil || !strings.Contains(err.Error(), "learning rate") {
		t.Errorf("Vanilla with a NaN learning rate: %v", err)
	}
	p := DefaultPooledOptions()
	p.Points = -1
	if _, err := RunPooled(ds, g, p); err == nil || !strings.Contains(err.Error(), "pooled points") {
		t.Errorf("Pooled with -1 points: %v", err)
	}
	p = DefaultPooledOptions()
	p.InitSigma = math.Inf(1)
	if _, err := RunPooled(ds, g, p); err == nil || !strings.Contains(err.Error(), "initial spread") {
		t.Errorf("Pooled with an infinite spread: %v", err)
	}
}
