package predict_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
)

// The test model: PAC-PFL on a small Polynomial data set (one input),
// GP clients at β = √m so that the tempering is not the plain posterior.
var (
	trainOnce sync.Once
	trained   *modelfile.Model
	trainedDS *data.Dataset
	trainErr  error
)

var testGP = lml.Model{D: 1, DF: 2, MeanHidden: []int{4}, KernelHidden: []int{4}}

func trainedModel(t *testing.T) (*modelfile.Model, *data.Dataset) {
	t.Helper()
	trainOnce.Do(func() {
		cfg := data.DefaultPolynomial()
		cfg.Existing, cfg.New, cfg.Train, cfg.NewTrain, cfg.Test, cfg.Seed = 4, 1, 12, 5, 6, 11
		ds, err := data.Polynomial(cfg)
		if err != nil {
			trainErr = err
			return
		}
		g := fl.NewGPModel(ds.D)
		g.Model, g.Beta = testGP, fl.Temperature{Rule: fl.TemperatureSqrt}
		opt := fl.DefaultPACPFLOptions()
		opt.Server.K, opt.Server.Rounds, opt.Server.Seed = 3, 20, 2
		opt.Bounds.PriorSamples, opt.Bounds.Learned = 0, nil
		res, err := fl.RunPACPFL(ds, g, opt, fl.MethodPACPFL)
		if err != nil {
			trainErr = err
			return
		}
		mf := &modelfile.Model{
			Kind: modelfile.KindGP, Task: modelfile.TaskRegression, Features: []string{"x"}, Target: "y",
			ClientColumn: "client",
			XMean:        ds.XMean, XStd: ds.XStd, YMean: ds.YMean, YStd: ds.YStd,
			GP: &modelfile.GPConfig{D: 1, DF: testGP.DF, MeanHidden: testGP.MeanHidden,
				KernelHidden: testGP.KernelHidden, Beta: "sqrt",
				Inference: &modelfile.GPInference{Mode: modelfile.InferenceExact, Seed: 9}},
			K: res.Train.K, Dim: res.Train.Dim, Particles: res.Train.Particles, Seed: 9,
		}
		for i, c := range ds.Existing {
			mf.Clients = append(mf.Clients, modelfile.Client{ID: fmt.Sprintf("c%d", i), X: c.X, Y: c.Y})
		}
		if trainErr = mf.Validate(); trainErr == nil {
			trained, trainedDS = mf, ds
		}
	})
	require.NoError(t, trainErr)
	return trained, trainedDS
}

// num is a value as a CSV file holds it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeCSV writes the data set in data units: every existing client's test
// rows (to predict), the new client "n0" with its training rows marked
// context and its test rows to predict, the first without a target.
// withCtx false leaves the context column out.
func writeCSV(t *testing.T, ds *data.Dataset, withCtx bool) string {
	t.Helper()
	unX := func(v float64) float64 { return ds.XMean[0] + ds.XStd[0]*v }
	unY := func(v float64) float64 { return ds.YMean + ds.YStd*v }
	var b strings.Builder
	row := func(client string, x, y float64, hasY bool, ctx int) {
		ys := ""
		if hasY {
			ys = num(unY(y))
		}
		if withCtx {
			fmt.Fprintf(&b, "%s,%s,%s,%d\n", client, num(unX(x)), ys, ctx)
		} else {
			fmt.Fprintf(&b, "%s,%s,%s\n", client, num(unX(x)), ys)
		}
	}
	if withCtx {
		b.WriteString("client,x,y,ctx\n")
	} else {
		b.WriteString("client,x,y\n")
	}
	for i, c := range ds.Existing {
		for j := range c.YTest {
			row(fmt.Sprintf("c%d", i), c.XTest[j], c.YTest[j], true, 0)
		}
	}
	n := ds.New[0]
	for j := range n.Y {
		row("n0", n.X[j], n.Y[j], true, 1)
	}
	for j := range n.YTest {
		row("n0", n.XTest[j], n.YTest[j], j > 0, 0)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// mixtureRef is the predictive of the mixture at row i in data units,
// computed from its components: mean, std and CDF.
type mixtureRef struct {
	mix         *lml.Mixture
	yMean, yStd float64
}

func (r mixtureRef) mean(i int) float64 {
	var s float64
	for κ, w := range r.mix.Weights {
		s += w * r.mix.Means[i*r.mix.K+κ]
	}
	return r.yMean + r.yStd*s
}

func (r mixtureRef) std(i int) float64 {
	var m, m2 float64
	for κ, w := range r.mix.Weights {
		μ, v := r.mix.Means[i*r.mix.K+κ], r.mix.Vars[i*r.mix.K+κ]
		m += w * μ
		m2 += w * (v + μ*μ)
	}
	return r.yStd * math.Sqrt(m2-m*m)
}

func (r mixtureRef) cdf(i int, y float64) float64 {
	z := (y - r.yMean) / r.yStd
	var s float64
	for κ, w := range r.mix.Weights {
		s += w * 0.5 * math.Erfc(-(z-r.mix.Means[i*r.mix.K+κ])/math.Sqrt(2*r.mix.Vars[i*r.mix.K+κ]))
	}
	return s
}

func near(t *testing.T, want, got float64, what string) {
	t.Helper()
	assert.InDelta(t, want, got, 1e-9*math.Max(1, math.Abs(want)), what)
}

// Predict gives, for a client the model knows and for a new one
// personalised on its context rows, the mixture of the particles' GP
// posteriors at the client's temperature, fitted here directly with
// lml.Predictor on the rows the client should be conditioned on.
func TestPredictMatchesDirectFit(t *testing.T) {
	mf, ds := trainedModel(t)
	path := writeCSV(t, ds, true)
	p, err := predict.New(mf)
	require.NoError(t, err)
	rec, err := p.ReadCSV(path, "ctx")
	require.NoError(t, err)
	res, err := p.Predict(rec)
	require.NoError(t, err)
	require.Len(t, res.Clients, 5)

	scale := func(v float64, mean, std float64) float64 { return (v - mean) / std }
	for _, id := range []string{"c1", "n0"} {
		// The client's conditioning rows and the rows to predict, from
		// the model and the file.
		var cx, cy, xt []float64
		var rows []int
		if id == "c1" {
			cx, cy = mf.Clients[1].X, mf.Clients[1].Y
		}
		for r := range rec.Rows() {
			if rec.Clients[rec.Client[r]] != id {
				continue
			}
			x := scale(rec.X[r], mf.XMean[0], mf.XStd[0])
			if rec.Context[r] {
				cx, cy = append(cx, x), append(cy, scale(rec.Y[r], mf.YMean, mf.YStd))
			} else {
				xt, rows = append(xt, x), append(rows, r)
			}
		}
		require.NotEmpty(t, rows, id)
		var cr *predict.ClientResult
		for i := range res.Clients {
			if res.Clients[i].ID == id {
				cr = &res.Clients[i]
			}
		}
		require.NotNil(t, cr, id)
		assert.Equal(t, id == "c1", cr.Known, id)
		assert.Equal(t, len(cy), cr.Conditioned, id)
		assert.Equal(t, rows, cr.Rows, id)

		lp, err := lml.NewPredictor(testGP, nil)
		require.NoError(t, err)
		m := float64(len(cy))
		require.NoError(t, lp.FitTempered(mf.Particles, cx, cy, math.Sqrt(m)/m))
		mix := &lml.Mixture{}
		require.NoError(t, lp.Predict(xt, mix))
		ref := mixtureRef{mix, mf.YMean, mf.YStd}
		for j, r := range rows {
			k := indexOf(res.Rows, r)
			require.GreaterOrEqual(t, k, 0, "row %d predicted", r)
			got := res.Regression[k]
			near(t, ref.mean(j), got.Mean, fmt.Sprintf("%s row %d mean", id, r))
			near(t, ref.std(j), got.Std, fmt.Sprintf("%s row %d std", id, r))
			near(t, 0.025, ref.cdf(j, got.Q025), fmt.Sprintf("%s row %d q2.5", id, r))
			near(t, 0.975, ref.cdf(j, got.Q975), fmt.Sprintf("%s row %d q97.5", id, r))
			assert.Less(t, got.Q025, got.Mean)
			assert.Less(t, got.Mean, got.Q975)
			// The client's own output holds the same predictive.
			near(t, ref.mean(j), mf.YMean+mf.YStd*cr.Mixture.Mean(j), "mixture")
		}
	}

	// Every row but the context rows is predicted, in file order, and the
	// CSV holds them with the observed target where there is one.
	var buf bytes.Buffer
	require.NoError(t, res.WriteCSV(&buf))
	out, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"line", "client", "observed", "mean", "std", "q2.5", "q97.5"}, out[0])
	require.Len(t, out, 1+len(res.Rows))
	ctx := 0
	for r := range rec.Rows() {
		if rec.Context[r] {
			ctx++
		}
	}
	assert.Equal(t, rec.Rows()-ctx, len(res.Rows))
	missing := 0
	for i, r := range res.Rows {
		row := out[1+i]
		assert.Equal(t, strconv.Itoa(rec.Line[r]), row[0])
		assert.Equal(t, rec.Clients[rec.Client[r]], row[1])
		if math.IsNaN(rec.Y[r]) {
			assert.Equal(t, "", row[2])
			missing++
		} else {
			assert.Equal(t, num(rec.Y[r]), row[2])
		}
		g := res.Regression[i]
		assert.Equal(t, []string{num(g.Mean), num(g.Std), num(g.Q025), num(g.Q975)}, row[3:])
	}
	assert.Equal(t, 1, missing, "the row without a target")
}

func indexOf(xs []int, v int) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

// withProcs runs f with GOMAXPROCS n.
func withProcs(n int, f func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

func mixtureBits(t *testing.T, what string, a, b *lml.Mixture) {
	t.Helper()
	require.Equal(t, a.N, b.N, what)
	require.Equal(t, a.K, b.K, what)
	for name, xs := range map[string][2][]float64{"weights": {a.Weights, b.Weights}, "means": {a.Means, b.Means},
		"vars": {a.Vars, b.Vars}} {
		require.Equal(t, len(xs[0]), len(xs[1]), "%s %s", what, name)
		for i := range xs[0] {
			require.Equal(t, math.Float64bits(xs[0][i]), math.Float64bits(xs[1][i]), "%s %s[%d]", what, name, i)
		}
	}
}

// The predictions do not depend on the number of workers (GOMAXPROCS 1 or
// 2), with the exact and with the sparse GP, nor on the other clients
// predicted with a client.
func TestPredictWorkerCountIndependent(t *testing.T) {
	mf, ds := trainedModel(t)
	path := writeCSV(t, ds, true)
	for _, sparse := range []bool{false, true} {
		p, err := predict.New(mf)
		require.NoError(t, err)
		if sparse {
			require.NoError(t, p.SetInferenceMode(modelfile.InferenceSparse))
			require.NoError(t, p.SetInducing(5))
		}
		rec, err := p.ReadCSV(path, "ctx")
		require.NoError(t, err)
		var res [2]*predict.Result
		var csvs [2][]byte
		for i, procs := range []int{1, 2} {
			withProcs(procs, func() {
				res[i], err = p.Predict(rec)
			})
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, res[i].WriteCSV(&b))
			csvs[i] = b.Bytes()
		}
		assert.Equal(t, string(csvs[0]), string(csvs[1]), "sparse %v", sparse)
		for c := range res[0].Clients {
			mixtureBits(t, fmt.Sprintf("sparse %v client %d", sparse, c), res[0].Clients[c].Mixture,
				res[1].Clients[c].Mixture)
		}
		// One client alone: the same bits as among the others.
		var clients []predict.Client
		for i, c := range ds.Existing {
			clients = append(clients, predict.Client{ID: fmt.Sprintf("c%d", i), X: c.X, Y: c.Y, XTest: c.XTest})
		}
		var all []predict.Output
		withProcs(2, func() { all, err = p.PredictClients(clients) })
		require.NoError(t, err)
		one, err := p.PredictClients(clients[2:3])
		require.NoError(t, err)
		mixtureBits(t, "alone", all[2].Mixture, one[0].Mixture)
	}
	// The sparse predictive is another predictive, or the test would not
	// have tried the sparse path.
	p, err := predict.New(mf)
	require.NoError(t, err)
	x := predict.Client{ID: "c0", X: ds.Existing[0].X, Y: ds.Existing[0].Y, XTest: ds.Existing[0].XTest}
	exact, err := p.PredictClients([]predict.Client{x})
	require.NoError(t, err)
	require.NoError(t, p.SetInferenceMode(modelfile.InferenceSparse))
	require.NoError(t, p.SetInducing(5))
	sp, err := p.PredictClients([]predict.Client{x})
	require.NoError(t, err)
	assert.NotEqual(t, exact[0].Mixture.Means, sp[0].Mixture.Means)
}

// A Predictor predicts from several goroutines at once, each getting what
// it gets alone (go test -race checks that they share nothing).
func TestPredictConcurrentUse(t *testing.T) {
	mf, ds := trainedModel(t)
	p, err := predict.New(mf)
	require.NoError(t, err)
	rec, err := p.ReadCSV(writeCSV(t, ds, true), "ctx")
	require.NoError(t, err)
	alone, err := p.Predict(rec)
	require.NoError(t, err)
	var res [3]*predict.Result
	var errs [3]error
	var wg sync.WaitGroup
	for i := range res {
		wg.Go(func() { res[i], errs[i] = p.Predict(rec) })
	}
	wg.Wait()
	for i := range res {
		require.NoError(t, errs[i])
		for c := range alone.Clients {
			mixtureBits(t, fmt.Sprintf("goroutine %d client %d", i, c), alone.Clients[c].Mixture,
				res[i].Clients[c].Mixture)
		}
	}
}

// An M above a client's conditioning rows is an InducingError, before any
// client is fitted: Requested when SetInducing chose M, not when the model
// file did.
func TestInducingAboveRows(t *testing.T) {
	mf, ds := trainedModel(t)
	path := writeCSV(t, ds, true)
	newRows := len(ds.New[0].Y)
	sparse := *mf
	gp := *mf.GP
	gp.Inference = &modelfile.GPInference{Mode: modelfile.InferenceSparse, Inducing: newRows + 2, Seed: 9}
	sparse.GP = &gp
	p, err := predict.New(&sparse)
	require.NoError(t, err)
	rec, err := p.ReadCSV(path, "ctx")
	require.NoError(t, err)

	_, err = p.Predict(rec)
	var ie *predict.InducingError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, predict.InducingError{Client: "n0", M: newRows + 2, Rows: newRows, Inference: p.Inference(),
		Requested: false}, *ie)
	assert.ErrorIs(t, err, fl.ErrTooManyInducing)
	assert.Contains(t, err.Error(), fmt.Sprintf(`client "n0": the model's GP inference is sparse, M = %d, but the `+
		`client is conditioned on only %d rows`, newRows+2, newRows))

	require.NoError(t, p.SetInducing(newRows+1))
	_, err = p.Predict(rec)
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, predict.InducingError{Client: "n0", M: newRows + 1, Rows: newRows, Inference: p.Inference(),
		Requested: true}, *ie)
	assert.ErrorIs(t, err, fl.ErrTooManyInducing)

	require.NoError(t, p.SetInducing(newRows))
	_, err = p.Predict(rec)
	assert.NoError(t, err)

	// The exact GP has no inducing inputs to refuse.
	require.NoError(t, p.SetInducing(newRows+1))
	require.NoError(t, p.SetInferenceMode(modelfile.InferenceExact))
	_, err = p.Predict(rec)
	assert.NoError(t, err)
	assert.Error(t, p.SetInferenceMode(""))
	assert.Error(t, p.SetInferenceMode("fast"))
	assert.Error(t, p.SetInducing(-1))
}

// A new client without context rows has nothing to be personalised on.
func TestNoContext(t *testing.T) {
	mf, ds := trainedModel(t)
	path := writeCSV(t, ds, false)
	p, err := predict.New(mf)
	require.NoError(t, err)
	rec, err := p.ReadCSV(path, "")
	require.NoError(t, err)
	_, err = p.Predict(rec)
	var ne *predict.NoContextError
	require.True(t, errors.As(err, &ne), "%v", err)
	first := 2 // the header is line 1
	for _, c := range ds.Existing {
		first += len(c.YTest)
	}
	assert.Equal(t, predict.NoContextError{Client: "n0", Source: path, Line: first}, *ne)

	_, err = p.ClientPoints(rec, "n0")
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.Equal(t, predict.NoContextError{Client: "n0"}, *ne)

	// A file without a feature of the model says which ones it has.
	other := filepath.Join(t.TempDir(), "other.csv")
	require.NoError(t, os.WriteFile(other, []byte("client,z,y\nc0,1,2\n"), 0o644))
	_, err = p.ReadCSV(other, "")
	assert.ErrorContains(t, err, `the model was trained on the features "x"`)
}

// ClientPoints splits a client's rows into the conditioning set (the
// stored rows, then its context rows) and its test rows, in data units.
func TestClientPoints(t *testing.T) {
	mf, ds := trainedModel(t)
	path := writeCSV(t, ds, true)
	p, err := predict.New(mf)
	require.NoError(t, err)
	rec, err := p.ReadCSV(path, "ctx")
	require.NoError(t, err)
	pts, err := p.ClientPoints(rec, "c2")
	require.NoError(t, err)
	assert.True(t, pts.Known)
	require.Len(t, pts.TrainY, len(ds.Existing[2].Y))
	for i, y := range ds.Existing[2].Y {
		near(t, ds.YMean+ds.YStd*y, pts.TrainY[i], "stored y")
		near(t, ds.XMean[0]+ds.XStd[0]*ds.Existing[2].X[i], pts.TrainX[i], "stored x")
	}
	assert.Len(t, pts.TestY, len(ds.Existing[2].YTest))
	assert.Equal(t, mf.Clients[2].Y, pts.Client.Y)

	pts, err = p.ClientPoints(rec, "n0")
	require.NoError(t, err)
	assert.False(t, pts.Known)
	assert.Len(t, pts.TrainY, len(ds.New[0].Y))
	assert.Len(t, pts.TestY, len(ds.New[0].YTest)-1, "the row without a target is left out")
	assert.Len(t, pts.Client.X, len(ds.New[0].Y))
}

// A BNN model has no GP inference to override; its class probabilities
// are distributions and do not depend on the number of workers.
func TestBNNModel(t *testing.T) {
	b := lml.BNN{Arch: lml.ArchMLP, InC: 2, InH: 1, InW: 1, Hidden: 3, Classes: 2}
	rng := rand.New(rand.NewPCG(1, 2))
	const k = 2
	particles := make([]float64, k*b.NumParams())
	for i := range particles {
		particles[i] = 0.3 * rng.NormFloat64()
	}
	mf := &modelfile.Model{
		Kind: modelfile.KindBNN, Task: modelfile.TaskClassification, Features: []string{"a", "b"}, Target: "label",
		ClientColumn: "site",
		Classes:      []string{"no", "yes"}, XMean: []float64{0, 0}, XStd: []float64{1, 1}, YMean: 0, YStd: 1,
		BNN: &modelfile.BNNConfig{Arch: b.Arch, InC: 2, InH: 1, InW: 1, Hidden: 3, Classes: 2, Particles: 2, Steps: 3,
			LR: 1e-3, AlphaSamples: 4},
		K: k, Dim: b.NumParams(), Particles: particles, Seed: 5,
	}
	require.NoError(t, mf.Validate())
	p, err := predict.New(mf)
	require.NoError(t, err)
	assert.False(t, p.Regression())
	assert.ErrorIs(t, p.SetInferenceMode(modelfile.InferenceExact), predict.ErrNotGP)
	assert.ErrorIs(t, p.SetInducing(3), predict.ErrNotGP)

	clients := make([]predict.Client, 3)
	for c := range clients {
		clients[c].ID = fmt.Sprintf("s%d", c)
		for range 6 {
			x0, x1 := rng.NormFloat64(), rng.NormFloat64()
			clients[c].X = append(clients[c].X, x0, x1)
			clients[c].Y = append(clients[c].Y, map[bool]float64{true: 1, false: 0}[x0+x1 > 0])
		}
		clients[c].XTest = []float64{rng.NormFloat64(), rng.NormFloat64(), 1, -1}
	}
	var outs [2][]predict.Output
	for i, procs := range []int{1, 2} {
		withProcs(procs, func() { outs[i], err = p.PredictClients(clients) })
		require.NoError(t, err)
	}
	for c := range clients {
		require.Len(t, outs[0][c].Probs, 2*2)
		for r := range 2 {
			pr := outs[0][c].Probs[2*r : 2*r+2]
			near(t, 1, pr[0]+pr[1], "probabilities sum to 1")
		}
		for i := range outs[0][c].Probs {
			require.Equal(t, math.Float64bits(outs[0][c].Probs[i]), math.Float64bits(outs[1][c].Probs[i]),
				"client %d prob %d", c, i)
		}
	}
}

// Load reads a model file as New takes the model in memory: the same
// predictions bit for bit. An inconsistent model is ErrMalformed.
func TestLoadAndMalformed(t *testing.T) {
	mf, ds := trainedModel(t)
	b, err := modelfile.Encode(mf)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.pacpfl")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	loaded, err := predict.Load(path)
	require.NoError(t, err)
	mem, err := predict.New(mf)
	require.NoError(t, err)
	c := []predict.Client{{ID: "n0", X: ds.New[0].X, Y: ds.New[0].Y, XTest: ds.New[0].XTest}}
	a, err := loaded.PredictClients(c)
	require.NoError(t, err)
	m, err := mem.PredictClients(c)
	require.NoError(t, err)
	mixtureBits(t, "loaded", m[0].Mixture, a[0].Mixture)

	_, err = predict.Load(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	bad := *mf
	bad.Dim, bad.Particles = mf.Dim-1, mf.Particles[:mf.K*(mf.Dim-1)]
	_, err = predict.New(&bad)
	assert.ErrorIs(t, err, modelfile.ErrMalformed)
	assert.ErrorContains(t, err, fmt.Sprintf("the GP model has %d parameters, the particles %d", mf.Dim, mf.Dim-1))
	bad = *mf
	bad.GP = nil
	_, err = predict.New(&bad)
	assert.ErrorIs(t, err, modelfile.ErrMalformed)
}

// Quantile inverts the mixture's CDF.
func TestQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	mix := &lml.Mixture{N: 3, K: 3, Weights: []float64{0.5, 0.3, 0.2}}
	for range mix.N * mix.K {
		mix.Means = append(mix.Means, 3*rng.NormFloat64())
		mix.Vars = append(mix.Vars, math.Exp(rng.NormFloat64()))
	}
	ref := mixtureRef{mix, 0, 1}
	for i := range mix.N {
		for _, q := range []float64{0.001, 0.025, 0.5, 0.975, 0.999} {
			near(t, q, ref.cdf(i, predict.Quantile(mix, i, q)), fmt.Sprintf("row %d q %v", i, q))
		}
	}
}

func TestResultSummary(t *testing.T) {
	r := &predict.Result{Rows: []int{0, 2, 3}, Clients: []predict.ClientResult{{ID: "a", Known: true}, {ID: "b"}}}
	assert.Equal(t, 1, r.KnownClients())
	var b strings.Builder
	require.NoError(t, r.WriteSummary(&b, "out.csv"))
	assert.Equal(t, "3 rows of 2 clients (1 known to the model, 1 new) predicted into out.csv\n", b.String())
}
