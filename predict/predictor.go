package predict

import (
	"errors"
	"fmt"
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

// Predictor is a trained model ready to personalise and predict. Make one
// with New or Load.
type Predictor struct {
	file *modelfile.Model
	gp   lml.Model
	beta fl.Temperature
	bnn  lml.BNN
	post lml.BNNPosteriorOptions
	// inference is how the GP clients are conditioned and predict: the
	// model file's, or what SetInferenceMode and SetInducing override;
	// inducingSet: M came from SetInducing, so an M above a client's rows
	// is the caller's choice (InducingError.Requested).
	inference   fl.GPInference
	inducingSet bool
}

// ErrNotGP is returned by SetInferenceMode and SetInducing on a model
// whose clients are not GPs (a BNN classification model): it has no GP
// inference to override.
var ErrNotGP = errors.New("the GP inference applies to GP (regression) models only")

// Load reads the model file at path (modelfile.Load) and makes its
// Predictor; every error names the file.
func Load(path string) (*Predictor, error) {
	mf, err := modelfile.Load(path)
	if err != nil {
		return nil, err
	}
	p, err := New(mf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// New checks that mf's configuration builds a client model whose parameter
// count is the particles' dimension, and returns its Predictor. An
// inconsistent model wraps modelfile.ErrMalformed. The Predictor reads mf
// and does not change it; mf must not change while the Predictor is used.
func New(mf *modelfile.Model) (*Predictor, error) {
	if err := checkShape(mf); err != nil {
		return nil, err
	}
	p := &Predictor{file: mf}
	switch mf.Kind {
	case modelfile.KindGP:
		g := mf.GP
		p.gp = lml.Model{D: g.D, DF: g.DF, MeanHidden: g.MeanHidden, KernelHidden: g.KernelHidden}
		if err := p.gp.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
		if n := p.gp.NumParams(); n != mf.Dim {
			return nil,
				fmt.Errorf("%w: the GP model has %d parameters, the particles %d", modelfile.ErrMalformed, n, mf.Dim)
		}
		var err error
		if p.beta, err = fl.ParseTemperature(g.Beta); err != nil {
			return nil, fmt.Errorf("%w: β: %v", modelfile.ErrMalformed, err)
		}
		p.inference = fileInference(mf)
	case modelfile.KindBNN:
		b := mf.BNN
		p.bnn = lml.BNN{Arch: b.Arch, InC: b.InC, InH: b.InH, InW: b.InW, Hidden: b.Hidden, Classes: b.Classes}
		if err := p.bnn.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
		if n := p.bnn.NumParams(); n != mf.Dim {
			return nil,
				fmt.Errorf("%w: the BNN has %d prior parameters, the particles %d", modelfile.ErrMalformed, n, mf.Dim)
		}
		p.post = lml.BNNPosteriorOptions{Particles: b.Particles, Steps: b.Steps, LR: b.LR, AlphaSamples: b.AlphaSamples}
		if err := p.post.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", modelfile.ErrMalformed, err)
		}
	}
	return p, nil
}

// checkShape refuses a model whose parts do not fit together in the ways
// that would make prediction index out of range. modelfile.Decode checks
// all of this and more (Model.Validate), but a model built in memory, such
// as one just trained, has not been through it; New leaves the checks of
// values (finite particles, say) to the computations that use them.
func checkShape(mf *modelfile.Model) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", modelfile.ErrMalformed, fmt.Sprintf(format, a...))
	}
	d := len(mf.Features)
	switch {
	case mf.Kind != modelfile.KindGP && mf.Kind != modelfile.KindBNN:
		return bad("unknown model kind %q", mf.Kind)
	case mf.Kind == modelfile.KindGP && (mf.GP == nil || mf.Task != modelfile.TaskRegression):
		return bad("GP clients need a GP configuration and the regression task")
	case mf.Kind == modelfile.KindBNN && (mf.BNN == nil || mf.Task != modelfile.TaskClassification):
		return bad("BNN clients need a BNN configuration and the classification task")
	case mf.K < 1 || mf.Dim < 1 || len(mf.Particles) != mf.K*mf.Dim:
		return bad("%d particle values for k×dφ = %d×%d", len(mf.Particles), mf.K, mf.Dim)
	case len(mf.XMean) != d || len(mf.XStd) != d:
		return bad("standardisation of %d and %d features for %d features", len(mf.XMean), len(mf.XStd), d)
	case mf.Kind == modelfile.KindBNN && mf.BNN.Classes != len(mf.Classes):
		return bad("%d classes for %d class names", mf.BNN.Classes, len(mf.Classes))
	}
	for _, c := range mf.Clients {
		if len(c.X) != len(c.Y)*d {
			return bad("client %q: %d inputs for %d rows of %d features", c.ID, len(c.X), len(c.Y), d)
		}
	}
	return nil
}

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

// Model is the model file the Predictor was made from.
func (p *Predictor) Model() *modelfile.Model { return p.file }

// Regression reports whether the model predicts a number (GP clients)
// rather than class probabilities (BNN clients).
func (p *Predictor) Regression() bool { return p.file.Task == modelfile.TaskRegression }

// Inference is how GP clients are conditioned and predict: the model
// file's inference with the overrides applied.
func (p *Predictor) Inference() fl.GPInference { return p.inference }

// SetInferenceMode replaces the mode of the model's GP inference (exact,
// sparse or auto; see fl.GPInference), keeping its M and seed. It must not
// be called while the Predictor predicts.
func (p *Predictor) SetInferenceMode(mode string) error {
	if !p.Regression() {
		return fmt.Errorf("%w; this one has %s clients", ErrNotGP, p.file.Kind)
	}
	if err := (fl.GPInference{Mode: mode}).Validate(); err != nil || mode == "" {
		return fmt.Errorf("GP inference %q: want exact, sparse or auto", mode)
	}
	p.inference.Mode = mode
	return nil
}

// SetInducing replaces the number of inducing inputs M of a sparse client
// (0: fl.DefaultInducing, or the client's rows if fewer), keeping the mode
// and the seed. A client conditioned on fewer rows than an M set here is
// an InducingError with Requested set. It must not be called while the
// Predictor predicts.
func (p *Predictor) SetInducing(m int) error {
	if !p.Regression() {
		return fmt.Errorf("%w; this one has %s clients", ErrNotGP, p.file.Kind)
	}
	if m < 0 {
		return fmt.Errorf("%d inducing inputs: want at least 1 (0: the default %d)", m, fl.DefaultInducing)
	}
	p.inference.Inducing, p.inducingSet = m, true
	return nil
}

// InducingError is a sparse GP client conditioned on fewer rows than the
// inducing inputs its inference asks for. It matches fl.ErrTooManyInducing.
type InducingError struct {
	Client    string
	M, Rows   int
	Inference fl.GPInference
	// Requested: M was set with SetInducing rather than recorded in the
	// model file.
	Requested bool
}

func (e *InducingError) Error() string {
	if e.Requested {
		return fmt.Sprintf("client %q: %d inducing inputs requested, but the client is conditioned on only %d rows",
			e.Client, e.M, e.Rows)
	}
	return fmt.Sprintf("client %q: the model's GP inference is %s, but the client is conditioned on only %d rows",
		e.Client, e.Inference, e.Rows)
}

func (e *InducingError) Is(target error) bool { return target == fl.ErrTooManyInducing }

// Client is one client to personalise and predict for, everything
// standardised with the model's statistics (ScaleX, ScaleY): the rows it
// is conditioned on (X, rows×D, and Y: targets, or class indices) and the
// inputs to predict (XTest, rows×D).
type Client struct {
	ID    string
	X, Y  []float64
	XTest []float64
}

// Output is one client's prediction at its XTest.
type Output struct {
	// Mixture is the regression predictive, standardised: a mixture over
	// the particles of their tempered GP posteriors (Summary turns a row
	// into data units).
	Mixture *lml.Mixture
	// Probs are the class probabilities of a classification model, rows ×
	// classes.
	Probs []float64
}

// predictTag is the random-stream tag of a client's BNN posterior
// inference in prediction ("userpred").
const predictTag = 0x7573657270726564

// PredictClients conditions every client on its rows and predicts its
// XTest, spreading the clients over GOMAXPROCS workers (see the package
// comment: the outputs do not depend on their number). The outputs are in
// the order of clients.
//
// A GP client is conditioned with the Predictor's inference: the exact GP,
// or the sparse predictive (lml.SparsePredictor) through M inducing inputs
// chosen from its conditioning rows by the federation's rule
// (fl.GPInference.InducingFor). Every client's plan is checked before any
// is fitted, so that an M above a client's rows (InducingError) fails at
// once.
func (p *Predictor) PredictClients(clients []Client) ([]Output, error) {
	out := make([]Output, len(clients))
	if p.Regression() {
		for i := range clients {
			m := len(clients[i].Y)
			if m == 0 {
				continue // predictOne says so
			}
			if _, _, err := p.inference.Plan(m); err != nil {
				if errors.Is(err, fl.ErrTooManyInducing) {
					return nil, &InducingError{Client: clients[i].ID, M: p.inference.Inducing, Rows: m,
						Inference: p.inference, Requested: p.inducingSet}
				}
				return nil, fmt.Errorf("client %q: %w", clients[i].ID, err)
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
	errs := workq.Run(len(clients), 0, func() (*worker, error) {
		w := &worker{}
		wmu.Lock()
		workers = append(workers, w)
		wmu.Unlock()
		var err error
		if p.Regression() {
			w.gp, err = lml.NewPredictor(p.gp, linalg.NewNative(1))
		} else {
			one := func() blas.Float64 { return linalg.NewNative(1) }
			w.bnn, err = lml.NewBNNPredictor(p.bnn, p.post, conv.Options{BLAS: one(), WorkerBLAS: one, Workers: 1})
		}
		return w, err
	}, func(w *worker, i int) (err error) {
		out[i], err = p.predictOne(w.gp, &w.sp, w.bnn, &clients[i])
		return err
	})
	if i, err := workq.First(errs); err != nil {
		return nil, fmt.Errorf("client %q: %w", clients[i].ID, err)
	}
	return out, nil
}

// predictOne conditions on client c and predicts; *sp is the worker's
// sparse predictor, made on first use.
func (p *Predictor) predictOne(gp *lml.Predictor, sp **lml.SparsePredictor, bnn *lml.BNNPredictor,
	c *Client) (Output, error) {
	if len(c.Y) == 0 {
		return Output{}, errors.New("no data to personalise on")
	}
	if p.Regression() {
		m := len(c.Y)
		// The Gibbs posterior at the client's temperature β(m): the
		// likelihood to the power β(m)/m, as in training.
		scale := p.beta.For(m) / float64(m)
		sparse, M, err := p.inference.Plan(m)
		if err != nil {
			return Output{}, err
		}
		mix := &lml.Mixture{}
		if sparse {
			z, err := p.inference.InducingFor(c.X, p.gp.D, M)
			if err != nil {
				return Output{}, err
			}
			if *sp == nil {
				// One thread: the clients are spread over the cores.
				if *sp, err = lml.NewSparsePredictor(p.gp, lml.SparseOptions{Threads: 1}); err != nil {
					return Output{}, err
				}
			}
			if err := (*sp).FitTempered(p.file.Particles, c.X, c.Y, z, scale); err != nil {
				return Output{}, err
			}
			if len(c.XTest) == 0 {
				return Output{Mixture: mix}, nil
			}
			return Output{Mixture: mix}, (*sp).Predict(c.XTest, mix)
		}
		if err := gp.FitTempered(p.file.Particles, c.X, c.Y, scale); err != nil {
			return Output{}, err
		}
		if len(c.XTest) == 0 {
			return Output{Mixture: mix}, nil
		}
		return Output{Mixture: mix}, gp.Predict(c.XTest, mix)
	}
	// The client's own random stream: its posterior does not depend on
	// which worker runs it or on the other clients.
	rng := rand.New(rand.NewPCG(p.file.Seed, data.StreamID(predictTag, data.ClientStream(c.ID))))
	if err := bnn.Fit(p.file.Particles, c.X, c.Y, rng); err != nil {
		return Output{}, err
	}
	probs := make([]float64, len(c.XTest)/p.bnn.D()*p.bnn.Classes)
	if len(probs) == 0 {
		return Output{Probs: probs}, nil
	}
	return Output{Probs: probs}, bnn.Predict(c.XTest, probs)
}

// ScaleX returns a copy of x (rows × D, data units) standardised with the
// model's statistics, as Client wants it.
func (p *Predictor) ScaleX(x []float64) []float64 {
	f := p.file
	s := data.Scaling{XMean: f.XMean, XStd: f.XStd, YMean: f.YMean, YStd: f.YStd}
	out := append([]float64(nil), x...)
	s.ScaleX(out)
	return out
}

// ScaleY returns a copy of y standardised with the model's statistics
// (regression; class indices stay as they are).
func (p *Predictor) ScaleY(y []float64) []float64 {
	out := append([]float64(nil), y...)
	if p.Regression() {
		s := data.Scaling{YMean: p.file.YMean, YStd: p.file.YStd}
		s.ScaleY(out)
	}
	return out
}

// client returns the index of the model's client id, or −1.
func (p *Predictor) client(id string) int {
	for i, c := range p.file.Clients {
		if c.ID == id {
			return i
		}
	}
	return -1
}
