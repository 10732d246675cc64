package report

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/papers"
)

// GenFL settings of a GenFL report (methods.FLSOB and methods.PFL).
const (
	genflFLSOB = "flsob"
	genflPFL   = "pfl"
)

// GenFL is the --json report of pacpfl experiment genfl: GenFL's
// certificate (FL-SOB, or PFL's per-user bounds) over the seeds, with the
// settings it was computed under.
type GenFL struct {
	Dataset    string  `json:"dataset"`
	Partition  string  `json:"partition"` // iid or shards
	Prior      string  `json:"prior"`
	Objective  string  `json:"objective"`
	Setting    string  `json:"setting"` // flsob or pfl
	Bound      Summary `json:"bound"`
	TestError  Summary `json:"test_error"`
	TrainError Summary `json:"train_error"`
	KL         Summary `json:"kl"`
	BoundIs    string  `json:"bound_is"` // what the bound is a bound on, in words
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	DeltaPrime float64 `json:"delta_prime"`
	Estimator  string  `json:"estimator"`
	MCSamples  int     `json:"mc_samples"`
	Arch       string  `json:"arch"`
	KLPenalty  float64 `json:"kl_penalty"`
	Rounds     int     `json:"rounds"`
	Epochs     int     `json:"local_epochs"`
	HoldsAll   bool    `json:"bound_above_test_error_every_seed"`
	// Particles > 0: the prior is PAC-PFL's (methods.PACPFLPriorBound),
	// a uniform draw from its hyper-posterior's particles.
	Particles int `json:"pacpfl_particles,omitempty"`
	// NewBound and NewTestError: the same certificate of the new users
	// (PAC-PFL's prior with new users; nil otherwise).
	NewBound     *Summary    `json:"new_users_bound,omitempty"`
	NewTestError *Summary    `json:"new_users_test_error,omitempty"`
	Seeds        []GenFLSeed `json:"per_seed"`
	Seconds      float64     `json:"seconds"`
	CPU          string      `json:"cpu"`
}

// GenFLSeed is one seed's figures. For PFL, Bound, TestError, TrainError
// and KL are the means over the users, and the Client* fields their spread.
type GenFLSeed struct {
	Seed          uint64  `json:"seed"`
	Bound         Float   `json:"bound"`
	TestError     Float   `json:"test_error"`
	TrainError    Float   `json:"train_error"`
	KL            Float   `json:"kl"`
	M             int     `json:"m"`
	SamplingTerm  Float   `json:"sampling_term"`
	Pinsker       Float   `json:"pinsker_bound,omitempty"`
	Quadratic     Float   `json:"quadratic_bound,omitempty"`
	MeanNetError  Float   `json:"posterior_mean_test_error"`
	PriorError    Float   `json:"prior_mean_test_error"`
	Holds         bool    `json:"bound_above_test_error"`
	ClientBound   *Spread `json:"client_bound,omitempty"`
	ClientTest    *Spread `json:"client_test_error,omitempty"`
	ClientsAbove  int     `json:"clients_bound_above_test_error,omitempty"`
	NewUsers      int     `json:"new_users,omitempty"`
	NewBound      Float   `json:"new_users_bound,omitempty"`
	NewTestError  Float   `json:"new_users_test_error,omitempty"`
	MCSeconds     float64 `json:"mc_seconds"`
	EvalsPerSec   float64 `json:"mc_evaluations_per_second"`
	PriorSeconds  float64 `json:"prior_seconds"`
	TrainSeconds  float64 `json:"posterior_seconds"`
	TotalSeconds  float64 `json:"seconds"`
	MCEvaluations int64   `json:"-"` // the sampling step's evaluations (samples × images)
}

// Spread is the smallest, mean and largest of the users' figures.
type Spread struct {
	Min  Float `json:"min"`
	Mean Float `json:"mean"`
	Max  Float `json:"max"`
}

// NewGenFL is the report of GenFL run with options o in setting (flsob or
// pfl) on partition, before any seed: the settings, MCSamples the n of the
// bound the setting prints (FEDBOUND's, or each user's with pfl).
func NewGenFL(partition, setting string, o genfl.Options, cpu string) *GenFL {
	r := &GenFL{Dataset: "fmnist", Partition: partition, Prior: o.Prior.String(),
		Objective: o.Objective.Objective.String(),
		Setting:   setting, Confidence: 1 - o.Objective.Delta - o.DeltaPrime, Delta: o.Objective.Delta,
		DeltaPrime: o.DeltaPrime,
		Estimator:  o.MC.Estimator.String(), MCSamples: o.MC.N, Arch: o.Arch.String(), KLPenalty: o.Objective.KLPenalty,
		Rounds: o.PosteriorFed.Rounds, Epochs: o.PosteriorFed.LocalEpochs, HoldsAll: true, CPU: cpu}
	if setting == genflPFL {
		r.MCSamples = o.ClientMC.N
	}
	return r
}

// Add appends the seeds of hr, an experiment of one methods.GenFLBound or
// methods.PACPFLPriorBound (whose prior it then names, SetPACPFLPrior),
// and summarises them; seconds is the experiment's wall time.
func (r *GenFL) Add(hr *harness.Report, seconds float64) error {
	if len(hr.Methods) != 1 || len(hr.Methods[0].Results) != len(hr.Seeds) || len(hr.Seeds) == 0 {
		return fmt.Errorf("report: a GenFL experiment has one method and a result per seed")
	}
	for i, res := range hr.Methods[0].Results {
		s, err := NewGenFLSeed(hr.Seeds[i], res)
		if err != nil {
			return err
		}
		r.HoldsAll = r.HoldsAll && s.Holds
		r.Seeds = append(r.Seeds, s)
		if p, ok := res.Detail.(interface{ Particles() int }); ok && i == 0 {
			r.SetPACPFLPrior(p.Particles())
		}
	}
	col := func(f func(GenFLSeed) Float) Summary {
		var xs []float64
		for _, s := range r.Seeds {
			xs = append(xs, float64(f(s)))
		}
		return Summarise(xs)
	}
	r.Bound = col(func(s GenFLSeed) Float { return s.Bound })
	r.TestError = col(func(s GenFLSeed) Float { return s.TestError })
	r.TrainError = col(func(s GenFLSeed) Float { return s.TrainError })
	r.KL = col(func(s GenFLSeed) Float { return s.KL })
	if r.Seeds[0].NewUsers > 0 {
		b, e := col(func(s GenFLSeed) Float { return s.NewBound }), col(func(s GenFLSeed) Float { return s.NewTestError })
		r.NewBound, r.NewTestError = &b, &e
	}
	r.BoundIs = r.boundStatement(r.Seeds[0].M)
	r.Seconds = seconds
	return nil
}

// NewGenFLSeed is one seed's row from methods.GenFLBound's result (its
// Detail a *genfl.FLSOBResult or *genfl.PFLResult) or from
// methods.PACPFLPriorBound's (a Detail whose PFL method gives the
// per-client means over PAC-PFL's particles).
func NewGenFLSeed(seed uint64, mr *fl.MethodResult) (GenFLSeed, error) {
	var r GenFLSeed
	switch res := mr.Detail.(type) {
	case *genfl.FLSOBResult:
		b := res.Bound
		r = GenFLSeed{Seed: seed, Bound: Float(b.Bound), TestError: Float(res.TestError),
			TrainError: Float(res.TrainError),
			KL:         Float(b.KL), M: b.M, SamplingTerm: Float(b.SamplingAdd), Pinsker: Float(b.PinskerAtN),
			Quadratic:    Float(b.QuadAtN),
			MeanNetError: Float(res.MeanTest), PriorError: Float(res.PriorTest), Holds: b.Bound >= res.TestError,
			MCSeconds: b.MC.Seconds, EvalsPerSec: float64(b.MC.Evals) / b.MC.Seconds, MCEvaluations: b.MC.Evals,
			PriorSeconds: res.Timings.Prior, TrainSeconds: res.Timings.Posterior}
	case *genfl.PFLResult:
		if len(res.Clients) == 0 {
			return r, fmt.Errorf("report: seed %d: a PFL result without users", seed)
		}
		r = pflSeed(seed, res)
	case interface {
		PFL() *genfl.PFLResult
		NewPFL() *genfl.PFLResult
	}: // methods.PACPFLPriorResult
		p := res.PFL()
		if len(p.Clients) == 0 {
			return r, fmt.Errorf("report: seed %d: a PFL result without users", seed)
		}
		r = pflSeed(seed, p)
		if n := res.NewPFL(); n != nil && len(n.Clients) > 0 {
			s := pflSeed(seed, n)
			r.NewUsers, r.NewBound, r.NewTestError = len(n.Clients), s.Bound, s.TestError
		}
	default:
		return r, fmt.Errorf("report: seed %d: %T is not a GenFL certificate", seed, mr.Detail)
	}
	r.TotalSeconds = mr.Seconds
	return r, nil
}

func pflSeed(seed uint64, res *genfl.PFLResult) GenFLSeed {
	var bs, ts, trs, kls, samp []float64
	above := 0
	var evals int64
	var mcs float64
	for _, c := range res.Clients {
		bs = append(bs, c.Bound.Bound)
		ts = append(ts, c.TestError)
		trs = append(trs, c.TrainError)
		kls = append(kls, c.Bound.KL)
		samp = append(samp, c.Bound.SamplingAdd)
		if c.Bound.Bound >= c.TestError {
			above++
		}
		evals += c.Bound.MC.Evals
		mcs += c.Bound.MC.Seconds
	}
	sb, st := genfl.SpreadOf(bs), genfl.SpreadOf(ts)
	return GenFLSeed{Seed: seed, Bound: Float(sb.Mean), TestError: Float(st.Mean), TrainError: Float(fl.Mean(trs)),
		KL: Float(fl.Mean(kls)), M: res.Clients[0].Bound.M, SamplingTerm: Float(fl.Mean(samp)),
		PriorError: Float(res.PriorTest), MeanNetError: Float(math.NaN()), Holds: sb.Mean >= st.Mean,
		ClientBound: &Spread{Float(sb.Min), Float(sb.Mean), Float(sb.Max)},
		ClientTest:  &Spread{Float(st.Min), Float(st.Mean), Float(st.Max)}, ClientsAbove: above,
		MCSeconds: mcs, EvalsPerSec: float64(evals) / mcs, MCEvaluations: evals,
		PriorSeconds: res.Timings.Prior, TrainSeconds: res.Timings.Posterior}
}

// SetPACPFLPrior marks the report as methods.PACPFLPriorBound's, with k
// particles.
func (r *GenFL) SetPACPFLPrior(k int) {
	r.Particles, r.Prior = k, fmt.Sprintf("PAC-PFL's (%d particles, learnt on S¹)", k)
}

// boundStatement says what the printed bound is a bound on.
func (r *GenFL) boundStatement(m int) string {
	n := fmt.Sprintf("n = %d Monte Carlo %s", r.MCSamples,
		map[string]string{"pairs": "(weight draw, training image) pairs", "full": "weight draws per user"}[r.Estimator])
	if r.Setting == genflPFL && r.Particles > 0 {
		return fmt.Sprintf("for each user k separately, with probability ≥ %.2f (1 − δ − δ′, δ = %g, δ′ = %g, each "+
			"split evenly over the %d particles) over its sample S²_k and the %s, the expected 0–1 error on user k's "+
			"image distribution of its stochastic classifier (a prior P drawn uniformly from PAC-PFL's particles, "+
			"learnt on the users' first halves S¹ only; Q_k(P) personalised from P on S²_k; a fresh weight draw "+
			"W ∼ Q_k(P) per prediction) is ≤ its bound, the mean of its bounds under the particles; assumes user k's "+
			"images are i.i.d. from that distribution. PAC-PFL's own SVGD posterior is not what is certified",
			r.Confidence, r.Delta, r.DeltaPrime, r.Particles, n)
	}
	if r.Setting == genflPFL {
		return fmt.Sprintf("for each user k separately, with probability ≥ %.2f (1 − δ − δ′, δ = %g, δ′ = %g) over "+
			"its sample S²_k and the %s, the expected 0–1 error on user k's image distribution of its stochastic "+
			"classifier Q_k (a fresh weight draw W ∼ Q_k per prediction) is ≤ its bound; assumes user k's images are "+
			"i.i.d. from that distribution%s",
			r.Confidence, r.Delta, r.DeltaPrime, n, r.shardsCaveat())
	}
	return fmt.Sprintf("with probability ≥ %.2f (1 − δ − δ′, δ = %g, δ′ = %g) over the users' pooled training sample "+
		"(the m = %d images the prior did not see) and the %s, the expected 0–1 error of the stochastic classifier Q "+
		"(a fresh weight draw W ∼ Q per prediction) on a Fashion-MNIST image drawn like the pool's is ≤ the bound; "+
		"assumes the pool's images are i.i.d. (the users' images are a label-blind random draw from it)",
		r.Confidence, r.Delta, r.DeltaPrime, m, n)
}

// shardsCaveat is what label-sorted shards add to the i.i.d. assumption.
func (r *GenFL) shardsCaveat() string {
	if r.Partition == "shards" {
		return " (for label-sorted shards this is an assumption, not a fact of the split)"
	}
	return ""
}

// WriteText writes the report as pacpfl prints it: the per-seed table, the
// summary, what the bound says and the seed paper's figures. clients is
// the number of users, testImages the pooled test images (flsob) and
// testDraws the weight draws per test image.
func (r *GenFL) WriteText(w io.Writer, clients, testImages, testDraws int) {
	what := "GenFL + FEDBOUND (FL-SOB, Alg. 1/2)"
	if r.Setting == genflPFL {
		what = "PFL: GenFL personalisation + per-user FEDBOUND (Alg. 3/4)"
	}
	fmt.Fprintf(w, "%s on Fashion-MNIST, %s partition, %d users, %s prior, objective %s (KL penalty %g), MLP %s, %d "+
		"rounds × %d local epochs\n\n",
		what, r.Partition, clients, r.Prior, r.Objective, r.KLPenalty, r.Arch, r.Rounds, r.Epochs)
	r.writeSeeds(w, clients)
	f := func(s Summary) string {
		if math.IsNaN(float64(s.CI95)) {
			return fmt.Sprintf("%.4f ± –", s.Mean)
		}
		return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.CI95)
	}
	fmt.Fprintf(w, "\nmean ± 95%% CI over %d seeds: bound %s, test error %s, train error %s, KL %s\n",
		len(r.Seeds), f(r.Bound), f(r.TestError), f(r.TrainError), f(r.KL))
	if r.NewBound != nil {
		fmt.Fprintf(w, "new users (%d, none of their data in PAC-PFL's training; each certified on its whole "+
			"training sample, the same statement): bound %s, test error %s\n", r.Seeds[0].NewUsers, f(*r.NewBound),
			f(*r.NewTestError))
	}
	fmt.Fprintf(w, "\nThe bound: %s.\n", r.BoundIs)
	if r.Setting == genflPFL && r.Partition == "shards" {
		fmt.Fprintln(w, "Test errors are Gibbs errors (the stochastic classifier) on each user's own held-out images "+
			"(10 % of its data), estimates with few images.")
	} else if r.Setting == genflPFL {
		fmt.Fprintln(w, "Test errors are Gibbs errors (the stochastic classifier) on each user's own held-out images.")
	} else {
		r.writeVerdict(w, testImages, testDraws)
	}
	r.writePaper(w)
	fmt.Fprintf(w, "\n%d seeds (%d..%d), wall time %.0fs on %s\n", len(r.Seeds), r.Seeds[0].Seed,
		r.Seeds[len(r.Seeds)-1].Seed, r.Seconds, r.CPU)
}

func (r *GenFL) writeSeeds(w io.Writer, clients int) {
	if r.Setting == genflPFL {
		fmt.Fprintln(w, "| seed | bound (mean over users) | test error (mean) | bound min / max | test error min / "+
			"max | users with bound ≥ test error | KL (mean) | m_k | seconds |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, s := range r.Seeds {
			fmt.Fprintf(w, "| %d | %.4f | %.4f | %.4f / %.4f | %.4f / %.4f | %d of %d | %.1f | %d | %.0f |\n", s.Seed,
				s.Bound, s.TestError,
				s.ClientBound.Min, s.ClientBound.Max, s.ClientTest.Min, s.ClientTest.Max, s.ClientsAbove, clients, s.KL,
				s.M, s.TotalSeconds)
		}
		return
	}
	fmt.Fprintln(w, "| seed | bound | test error | train error | KL(Q‖P) | KL/m | sampling term | posterior-mean "+
		"test error | prior-mean test error | seconds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range r.Seeds {
		fmt.Fprintf(w, "| %d | %.4f | %.4f | %.4f | %.1f | %.2g | %.4f | %.4f | %.4f | %.0f |\n", s.Seed, s.Bound,
			s.TestError, s.TrainError,
			s.KL, float64(s.KL)/float64(s.M), s.SamplingTerm, s.MeanNetError, s.PriorError, s.TotalSeconds)
	}
}

// writeVerdict says, for FL-SOB, what the test error estimates and whether
// the bound held, and the sampling step's throughput.
func (r *GenFL) writeVerdict(w io.Writer, testImages, testDraws int) {
	fmt.Fprintf(w, "Test error: Q's Gibbs error on the users' %d pooled held-out images (%d weight draws each), an "+
		"unbiased estimate of what the bound bounds; train error: FEDBOUND's Monte Carlo estimate of Q's error on "+
		"the bound's sample.\n",
		testImages, testDraws)
	verdict := "holds (bound ≥ test error) on every seed"
	if !r.HoldsAll {
		verdict = "is BELOW the measured test error on some seed"
	}
	below := true
	for _, s := range r.Seeds {
		below = below && s.Bound < 1
	}
	fmt.Fprintf(w, "The bound %s; it is %s.\n", verdict,
		map[bool]string{true: "non-vacuous (< 1) on every seed", false: "vacuous on some seed"}[below])
	var mcs, evs float64
	for _, s := range r.Seeds {
		mcs += s.MCSeconds
		evs += float64(s.MCEvaluations)
	}
	fmt.Fprintf(w, "Sampling step: %s estimator, n = %d; the sampling term (bound − bound with the Monte Carlo error "+
		"taken as exact) is in the table; %.3g evaluations/s (samples·images/s) on %s.\n",
		r.Estimator, r.MCSamples, evs/mcs, r.CPU)
}

// writePaper writes the seed paper's figures of the setting.
func (r *GenFL) writePaper(w io.Writer) {
	if r.Setting == genflFLSOB {
		fmt.Fprintln(w, "\nThe paper's Table 1 (MNIST, not Fashion-MNIST; 100 users, bound / test error):")
		for _, t := range papers.GenFLTable1() {
			fmt.Fprintf(w, "  %s prior, %s (%s): %.3f / %.3f\n", t.Prior, t.Objective, t.Note, t.Bound, t.TestError)
		}
		return
	}
	// One group per prior: "learnt prior f1 b / e, f2 b / e; random …".
	rows := papers.GenFLTable2()
	var groups []string
	for i := 0; i < len(rows); {
		var cells []string
		j := i
		for ; j < len(rows) && rows[j].Prior == rows[i].Prior; j++ {
			cells = append(cells, fmt.Sprintf("%s %.3f / %.3f", rows[j].Objective, rows[j].Bound, rows[j].TestError))
		}
		groups = append(groups, rows[i].Prior+" prior "+strings.Join(cells, ", "))
		i = j
	}
	fmt.Fprintf(w, "\nThe paper's Table 2 (MNIST, label-sorted shards; mean bound / mean test error): %s.\n",
		strings.Join(groups, "; "))
}

// CPUName names the CPU and the cores the program may use (GOMAXPROCS),
// the GenFL report's CPU: the machine of every time it prints.
func CPUName() string {
	c := cpuid.CPU
	return fmt.Sprintf("%s (family %d model %d), GOMAXPROCS %d", strings.TrimSpace(c.BrandName), c.Family, c.Model,
		runtime.GOMAXPROCS(0))
}
