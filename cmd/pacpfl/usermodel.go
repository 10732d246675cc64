package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/workq"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/modelfile"
)

// A trained model on a user's data (train --data FILE.csv --save, predict,
// plot predictive): the saved file's content and the client model it
// describes, ready to personalise and predict. Training evaluates through
// the same code that predict runs on the saved file, so the two agree bit
// for bit.

// userModel is a model file turned into a predictor.
type userModel struct {
	file *modelfile.Model
	gp   lml.Model
	beta fl.Temperature
	bnn  lml.BNN
	post lml.BNNPosteriorOptions
	// inference is how the GP clients are conditioned and predict: the
	// model file's (exact for a file from before it was recorded), or
	// what --gp-inference and --inducing override; inducingFlag: M came
	// from --inducing.
	inference    fl.GPInference
	inducingFlag bool
}

// loadUserModel reads and checks a model file.
func loadUserModel(path string) (*userModel, error) {
	mf, err := modelfile.Load(path)
	if err != nil {
		return nil, err
	}
	u, err := newUserModel(mf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// newUserModel checks that the file's configuration builds a client model
// whose parameter count is the particles' dimension.
func newUserModel(mf *modelfile.Model) (*userModel, error) {
	u := &userModel{file: mf}
	switch mf.Kind {
	case modelfile.KindGP:
		g := mf.GP
		u.gp = lml.Model{D: g.D, DF: g.DF, MeanHidden: g.MeanHidden, KernelHidden: g.KernelHidden}
		if err := u.gp.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
		if n := u.gp.NumParams(); n != mf.Dim {
			return nil, fmt.Errorf("%w: the GP model has %d parameters, the particles %d", modelfile.ErrMalformed, n, mf.Dim)
		}
		var err error
		if u.beta, err = fl.ParseTemperature(g.Beta); err != nil {
			return nil, fmt.Errorf("%w: β: %v", modelfile.ErrMalformed, err)
		}
		u.inference = fileInference(mf)
	case modelfile.KindBNN:
		b := mf.BNN
		u.bnn = lml.BNN{Arch: b.Arch, InC: b.InC, InH: b.InH, InW: b.InW, Hidden: b.Hidden, Classes: b.Classes}
		if err := u.bnn.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
		if n := u.bnn.NumParams(); n != mf.Dim {
			return nil, fmt.Errorf("%w: the BNN has %d prior parameters, the particles %d", modelfile.ErrMalformed, n, mf.Dim)
		}
		u.post = lml.BNNPosteriorOptions{Particles: b.Particles, Steps: b.Steps, LR: b.LR, AlphaSamples: b.AlphaSamples}
		if err := u.post.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
	}
	return u, nil
}

func (u *userModel) regression() bool { return u.file.Task == modelfile.TaskRegression }

// fileInference is the GP inference a model file records; a file written
// before pacpfl recorded it (format version 1) was trained and evaluated
// with the exact GP, and means it still.
func fileInference(mf *modelfile.Model) fl.GPInference {
	if mf.GP == nil || mf.GP.Inference == nil {
		return fl.GPInference{Mode: fl.InferenceExact, Seed: mf.Seed}
	}
	gi := mf.GP.Inference
	return fl.GPInference{Mode: gi.Mode, Inducing: gi.Inducing, Seed: gi.Seed}
}

// recordInference is gi as a model file records it (the mode spelled
// out).
func recordInference(gi fl.GPInference) *modelfile.GPInference {
	mode := gi.Mode
	if mode == "" {
		mode = fl.InferenceAuto
	}
	return &modelfile.GPInference{Mode: mode, Inducing: gi.Inducing, Seed: gi.Seed}
}

// inferenceOverride is --gp-inference and --inducing of the commands that
// predict with a saved model (predict, plot predictive). Unset, the model
// file's inference applies; each flag given on the command line replaces
// its part of it (the seed of the inducing inputs is always the file's).
type inferenceOverride struct {
	mode     string
	inducing int
	fs       *flag.FlagSet
}

func addInferenceOverride(fs *flag.FlagSet) *inferenceOverride {
	o := &inferenceOverride{fs: fs}
	fs.StringVar(&o.mode, "gp-inference", "", "GP models: how each client is conditioned and predicts: exact, sparse or auto (pacpfl train -h: --gp-inference); "+
		"default: the inference the model file records (a file written before pacpfl recorded it: exact); given, it wins over the file's")
	fs.IntVar(&o.inducing, "inducing", 0, fmt.Sprintf("GP models: inducing inputs M of a sparse client, chosen from its conditioning rows (0: %d, or the client's rows if fewer); "+
		"default: the model file's; given, it wins over the file's; more than a sparse client's rows is an error", fl.DefaultInducing))
	return o
}

// given reports whether flag name was on the command line.
func (o *inferenceOverride) given(name string) bool {
	set := false
	o.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// check refuses a bad mode or M (a usage error), before any file is read.
func (o *inferenceOverride) check() error {
	if o.given("gp-inference") {
		if err := (fl.GPInference{Mode: o.mode}).Validate(); err != nil || o.mode == "" {
			return usagef("--gp-inference %q: want exact, sparse or auto", o.mode)
		}
	}
	if o.inducing < 0 {
		return usagef("--inducing %d: want at least 1 inducing input (0: the default %d)", o.inducing, fl.DefaultInducing)
	}
	return nil
}

// apply sets u's inference from the flags given; on a classification (BNN)
// model they are a usage error.
func (o *inferenceOverride) apply(u *userModel) error {
	mode, inducing := o.given("gp-inference"), o.given("inducing")
	if !mode && !inducing {
		return nil
	}
	if !u.regression() {
		return usagef("--gp-inference and --inducing apply to GP (regression) models; this one has %s clients", u.file.Kind)
	}
	if mode {
		u.inference.Mode = o.mode
	}
	if inducing {
		u.inference.Inducing, u.inducingFlag = o.inducing, true
	}
	return nil
}

// plan is fl.GPInference.Plan for a client conditioned on m rows, its
// error naming where M came from (a usage error if from --inducing).
func (u *userModel) plan(m int) (sparse bool, M int, err error) {
	sparse, M, err = u.inference.Plan(m)
	if err == nil {
		return sparse, M, nil
	}
	if u.inducingFlag {
		return false, 0, usagef("--inducing %d: the client is conditioned on only %d rows (give --inducing %d or fewer, or --gp-inference exact)", u.inference.Inducing, m, m)
	}
	return false, 0, fmt.Errorf("the model's GP inference is %s, but the client is conditioned on only %d rows (give --inducing %d or fewer, or --gp-inference exact)", u.inference, m, m)
}

// client returns the index of an existing client, or −1.
func (u *userModel) client(id string) int {
	for i, c := range u.file.Clients {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// predictJob is one client's prediction: condition on (cx, cy), predict
// the rows of xt (everything standardised).
type predictJob struct {
	id         string
	cx, cy, xt []float64
}

// predictOut is a job's result: for regression the mixture predictive
// (standardised units), for classification the class probabilities
// (rows × classes).
type predictOut struct {
	mix   *lml.Mixture
	probs []float64
}

// predictTag is the random-stream tag of a client's BNN posterior
// inference in prediction ("userpred").
const predictTag = 0x7573657270726564

// predict runs the jobs over the cores, one single-threaded predictor per
// worker; the results do not depend on the number of workers.
//
// A GP client is conditioned with the model's inference (u.inference): the
// exact GP, or the sparse predictive (lml.SparsePredictor) through M
// inducing inputs chosen from its conditioning rows by the federation's
// rule (fl.GPInference.InducingFor). Every client's plan is checked before
// any is fitted, so that an M above a client's rows fails at once.
func (u *userModel) predict(jobs []predictJob) ([]predictOut, error) {
	out := make([]predictOut, len(jobs))
	if u.regression() {
		for i := range jobs {
			if len(jobs[i].cy) == 0 {
				continue // predictOne says so
			}
			if _, _, err := u.plan(len(jobs[i].cy)); err != nil {
				return nil, fmt.Errorf("client %q: %w", jobs[i].id, err)
			}
		}
	}
	type worker struct {
		gp  *lml.Predictor
		sp  *lml.SparsePredictor // made for the worker's first sparse client
		bnn *lml.BNNPredictor
	}
	var workers []*worker
	var wmu sync.Mutex
	defer func() {
		for _, w := range workers {
			if w.sp != nil {
				w.sp.Close()
			}
		}
	}()
	errs := workq.Run(len(jobs), 0, func() (*worker, error) {
		w := &worker{}
		wmu.Lock()
		workers = append(workers, w)
		wmu.Unlock()
		var err error
		if u.regression() {
			w.gp, err = lml.NewPredictor(u.gp, linalg.NewNative(1))
		} else {
			one := func() blas.Float64 { return linalg.NewNative(1) }
			w.bnn, err = lml.NewBNNPredictor(u.bnn, u.post, conv.Options{BLAS: one(), WorkerBLAS: one, Workers: 1})
		}
		return w, err
	}, func(w *worker, i int) (err error) {
		out[i], err = u.predictOne(w.gp, &w.sp, w.bnn, &jobs[i])
		return err
	})
	if i, err := workq.First(errs); err != nil {
		return nil, fmt.Errorf("client %q: %w", jobs[i].id, err)
	}
	return out, nil
}

// predictOne conditions on job j and predicts; *sp is the worker's sparse
// predictor, made on first use.
func (u *userModel) predictOne(gp *lml.Predictor, sp **lml.SparsePredictor, bnn *lml.BNNPredictor, j *predictJob) (predictOut, error) {
	if len(j.cy) == 0 {
		return predictOut{}, errors.New("no data to personalise on")
	}
	if u.regression() {
		m := len(j.cy)
		scale := u.beta.For(m) / float64(m)
		sparse, M, err := u.plan(m)
		if err != nil {
			return predictOut{}, err
		}
		mix := &lml.Mixture{}
		if sparse {
			z, err := u.inference.InducingFor(j.cx, u.gp.D, M)
			if err != nil {
				return predictOut{}, err
			}
			if *sp == nil {
				// One thread: the clients are spread over the cores.
				if *sp, err = lml.NewSparsePredictor(u.gp, lml.SparseOptions{Threads: 1}); err != nil {
					return predictOut{}, err
				}
			}
			if err := (*sp).FitTempered(u.file.Particles, j.cx, j.cy, z, scale); err != nil {
				return predictOut{}, err
			}
			if len(j.xt) == 0 {
				return predictOut{mix: mix}, nil
			}
			return predictOut{mix: mix}, (*sp).Predict(j.xt, mix)
		}
		if err := gp.FitTempered(u.file.Particles, j.cx, j.cy, scale); err != nil {
			return predictOut{}, err
		}
		if len(j.xt) == 0 {
			return predictOut{mix: mix}, nil
		}
		return predictOut{mix: mix}, gp.Predict(j.xt, mix)
	}
	rng := rand.New(rand.NewPCG(u.file.Seed, data.StreamID(predictTag, data.ClientStream(j.id))))
	if err := bnn.Fit(u.file.Particles, j.cx, j.cy, rng); err != nil {
		return predictOut{}, err
	}
	probs := make([]float64, len(j.xt)/u.bnn.D()*u.bnn.Classes)
	if len(probs) == 0 {
		return predictOut{probs: probs}, nil
	}
	return predictOut{probs: probs}, bnn.Predict(j.xt, probs)
}

// mixtureQuantile is the p-quantile of the mixture predictive at point i
// (standardised units), by bisection on its CDF to a relative width of
// 1e-13 of the components' spread.
func mixtureQuantile(mix *lml.Mixture, i int, p float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for κ := range mix.K {
		m, s := mix.Means[i*mix.K+κ], math.Sqrt(mix.Vars[i*mix.K+κ])
		lo, hi = math.Min(lo, m-40*s), math.Max(hi, m+40*s)
	}
	tol := 1e-13 * math.Max(hi-lo, math.SmallestNonzeroFloat64)
	for range 200 {
		mid := lo + (hi-lo)/2
		if hi-lo <= tol || mid == lo || mid == hi {
			break
		}
		if mix.CDF(i, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// regressionRow is the predictive at one point in the data's units.
type regressionRow struct {
	mean, std, q025, q975 float64
}

func (u *userModel) regressionRow(mix *lml.Mixture, i int) regressionRow {
	f := u.file
	un := func(v float64) float64 { return f.YMean + f.YStd*v }
	return regressionRow{
		mean: un(mix.Mean(i)), std: f.YStd * math.Sqrt(mix.Variance(i)),
		q025: un(mixtureQuantile(mix, i, 0.025)), q975: un(mixtureQuantile(mix, i, 0.975)),
	}
}

// scaleRows standardises a copy of x (rows × D) with the model's statistics.
func (u *userModel) scaleX(x []float64) []float64 {
	s := data.Scaling{XMean: u.file.XMean, XStd: u.file.XStd, YMean: u.file.YMean, YStd: u.file.YStd}
	out := append([]float64(nil), x...)
	s.ScaleX(out)
	return out
}

// scaleY standardises a copy of y (regression; class indices stay).
func (u *userModel) scaleY(y []float64) []float64 {
	out := append([]float64(nil), y...)
	if u.regression() {
		s := data.Scaling{YMean: u.file.YMean, YStd: u.file.YStd}
		s.ScaleY(out)
	}
	return out
}
