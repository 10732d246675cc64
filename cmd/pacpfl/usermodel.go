package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

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
}

// maxModelFile bounds a model file read into memory.
const maxModelFile = 16 << 30

// loadUserModel reads and checks a model file.
func loadUserModel(path string) (*userModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mf, err := modelfile.Read(f, maxModelFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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
func (u *userModel) predict(jobs []predictJob) ([]predictOut, error) {
	out := make([]predictOut, len(jobs))
	type worker struct {
		gp  *lml.Predictor
		bnn *lml.BNNPredictor
	}
	errs := workq.Run(len(jobs), 0, func() (w worker, err error) {
		if u.regression() {
			w.gp, err = lml.NewPredictor(u.gp, linalg.NewNative(1))
		} else {
			one := func() blas.Float64 { return linalg.NewNative(1) }
			w.bnn, err = lml.NewBNNPredictor(u.bnn, u.post, conv.Options{BLAS: one(), WorkerBLAS: one, Workers: 1})
		}
		return w, err
	}, func(w worker, i int) (err error) {
		out[i], err = u.predictOne(w.gp, w.bnn, &jobs[i])
		return err
	})
	if i, err := workq.First(errs); err != nil {
		return nil, fmt.Errorf("client %q: %w", jobs[i].id, err)
	}
	return out, nil
}

func (u *userModel) predictOne(gp *lml.Predictor, bnn *lml.BNNPredictor, j *predictJob) (predictOut, error) {
	if len(j.cy) == 0 {
		return predictOut{}, errors.New("no data to personalise on")
	}
	if u.regression() {
		scale := u.beta.For(len(j.cy)) / float64(len(j.cy))
		if err := gp.FitTempered(u.file.Particles, j.cx, j.cy, scale); err != nil {
			return predictOut{}, err
		}
		mix := &lml.Mixture{}
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
