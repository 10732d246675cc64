package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// ClientData is one client's data, inputs row-major (rows × D).
//
// For an existing client, X/Y is S_i (federated training and personalisation)
// and XExtra/YExtra is S̃_i (collected later, personalisation only). For a new
// client, X/Y is its only data S̃_ι and XExtra is empty.
type ClientData struct {
	X, Y           []float64
	XExtra, YExtra []float64
	XTest, YTest   []float64
	Mode           int // generating mode (synthetic data only)
}

// M is the number of samples in S_i.
func (c *ClientData) M() int { return len(c.Y) }

// PersonalisationData returns S_i ∪ S̃_i as fresh slices.
func (c *ClientData) PersonalisationData() (x, y []float64) {
	x = append(append([]float64(nil), c.X...), c.XExtra...)
	y = append(append([]float64(nil), c.Y...), c.YExtra...)
	return x, y
}

// Dataset is a federated data set: existing clients (in training) and new
// clients (never seen by the server).
type Dataset struct {
	Name     string
	D        int // input dimension
	Existing []ClientData
	New      []ClientData
	// Standardisation applied to every input and target of the set:
	// x ← (x − XMean)/XStd, y ← (y − YMean)/YStd.
	XMean, XStd []float64
	YMean, YStd float64
}

// N2 is the number of existing clients with S̃_i ≠ ∅ (n₂ of the paper).
func (d *Dataset) N2() int {
	n := 0
	for i := range d.Existing {
		if len(d.Existing[i].YExtra) > 0 {
			n++
		}
	}
	return n
}

// MinM is min_i m_i over existing clients.
func (d *Dataset) MinM() int {
	m := math.MaxInt
	for i := range d.Existing {
		m = min(m, d.Existing[i].M())
	}
	if m == math.MaxInt {
		return 0
	}
	return m
}

// PolynomialConfig describes the synthetic Polynomial data set (SPEC §7, §14).
type PolynomialConfig struct {
	Existing     int        // n existing clients (split evenly over the two modes)
	New          int        // new clients
	Train        int        // m_i training samples per existing client
	Extra        int        // m̃_i personalisation-only samples per existing client
	NewTrain     int        // samples held by each new client (0 → Train)
	Test         int        // test points per client
	Noise        float64    // observation noise std
	LengthScales [2]float64 // SE length scale of each mode
	Order        int        // polynomial order of the mode means
	Seed         uint64     // client data
	ModeSeed     uint64     // polynomial coefficients of the modes (fixed by default)
	Standardise  bool       // standardise with pooled existing-client training statistics
}

// DefaultModeSeed fixes the two mode polynomials for every data seed.
const DefaultModeSeed = 20240601

// DefaultPolynomial is the default configuration: 120 existing clients (60
// per mode), 24 new, 10 training and 100 test samples per client.
func DefaultPolynomial() PolynomialConfig {
	return PolynomialConfig{
		Existing: 120, New: 24, Train: 10, Test: 100,
		Noise: 0.1, LengthScales: [2]float64{0.2, 0.6}, Order: 7,
		ModeSeed: DefaultModeSeed, Standardise: true,
	}
}

func (c PolynomialConfig) validate() error {
	switch {
	case c.Existing < 1:
		return fmt.Errorf("polynomial: need at least 1 existing client, got %d", c.Existing)
	case c.New < 0:
		return fmt.Errorf("polynomial: negative number of new clients %d", c.New)
	case c.Train < 1:
		return fmt.Errorf("polynomial: need at least 1 training sample per client, got %d", c.Train)
	case c.Extra < 0 || c.NewTrain < 0:
		return errors.New("polynomial: negative sample count")
	case c.Test < 1:
		return fmt.Errorf("polynomial: need at least 1 test sample per client, got %d", c.Test)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
		return fmt.Errorf("polynomial: noise std must be finite and ≥ 0, got %v", c.Noise)
	case !(c.LengthScales[0] > 0) || !(c.LengthScales[1] > 0):
		return fmt.Errorf("polynomial: length scales must be > 0, got %v", c.LengthScales)
	case c.Order < 0:
		return fmt.Errorf("polynomial: negative order %d", c.Order)
	}
	return nil
}

// Polynomial generates the data set. It is a pure function of cfg: each
// client draws from its own random stream derived from (Seed, client index),
// so the result does not depend on GOMAXPROCS or generation order.
func Polynomial(cfg PolynomialConfig) (*Dataset, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	newTrain := cfg.NewTrain
	if newTrain == 0 {
		newTrain = cfg.Train
	}
	// Mode polynomials: c_j ~ N(0,1), j = 0..Order.
	modeRNG := rand.New(rand.NewPCG(cfg.ModeSeed, 0x6d6f646573))
	var coef [2][]float64
	for mo := range coef {
		coef[mo] = make([]float64, cfg.Order+1)
		for j := range coef[mo] {
			coef[mo][j] = modeRNG.NormFloat64()
		}
	}
	ds := &Dataset{Name: "polynomial", D: 1}
	gen := func(idx, mode, mTrain, mExtra int) (ClientData, error) {
		rng := rand.New(rand.NewPCG(cfg.Seed, streamID(0x706f6c79, uint64(idx))))
		total := mTrain + mExtra + cfg.Test
		x := make([]float64, total)
		for j := range x {
			x[j] = 2*rng.Float64() - 1
		}
		f, err := sampleGP(x, coef[mode], cfg.LengthScales[mode], rng)
		if err != nil {
			return ClientData{}, fmt.Errorf("polynomial: client %d: %w", idx, err)
		}
		y := make([]float64, total)
		for j := range y {
			y[j] = f[j] + cfg.Noise*rng.NormFloat64()
		}
		a, b := mTrain, mTrain+mExtra
		return ClientData{
			X: x[:a:a], Y: y[:a:a],
			XExtra: x[a:b:b], YExtra: y[a:b:b],
			XTest: x[b:], YTest: y[b:],
			Mode: mode,
		}, nil
	}
	for i := 0; i < cfg.Existing; i++ {
		c, err := gen(i, i%2, cfg.Train, cfg.Extra)
		if err != nil {
			return nil, err
		}
		ds.Existing = append(ds.Existing, c)
	}
	for i := 0; i < cfg.New; i++ {
		c, err := gen(cfg.Existing+i, i%2, newTrain, 0)
		if err != nil {
			return nil, err
		}
		ds.New = append(ds.New, c)
	}
	ds.XMean, ds.XStd = []float64{0}, []float64{1}
	ds.YMean, ds.YStd = 0, 1
	if cfg.Standardise {
		ds.standardise()
	}
	return ds, nil
}

// standardise rescales inputs and targets of every client with the mean and
// population std of the pooled existing-client training data S_1..S_n (the
// only data a server could legitimately summarise).
func (ds *Dataset) standardise() {
	d := ds.D
	xm, xs := make([]float64, d), make([]float64, d)
	var ym, ys float64
	cnt := 0
	for i := range ds.Existing {
		c := &ds.Existing[i]
		for r := range c.Y {
			for j := 0; j < d; j++ {
				xm[j] += c.X[r*d+j]
			}
			ym += c.Y[r]
			cnt++
		}
	}
	for j := range xm {
		xm[j] /= float64(cnt)
	}
	ym /= float64(cnt)
	for i := range ds.Existing {
		c := &ds.Existing[i]
		for r := range c.Y {
			for j := 0; j < d; j++ {
				v := c.X[r*d+j] - xm[j]
				xs[j] += v * v
			}
			v := c.Y[r] - ym
			ys += v * v
		}
	}
	for j := range xs {
		xs[j] = math.Sqrt(xs[j] / float64(cnt))
		if xs[j] == 0 {
			xs[j] = 1
		}
	}
	ys = math.Sqrt(ys / float64(cnt))
	if ys == 0 {
		ys = 1
	}
	apply := func(x, y []float64) {
		for r := range y {
			for j := 0; j < d; j++ {
				x[r*d+j] = (x[r*d+j] - xm[j]) / xs[j]
			}
			y[r] = (y[r] - ym) / ys
		}
	}
	for _, group := range [][]ClientData{ds.Existing, ds.New} {
		for i := range group {
			c := &group[i]
			apply(c.X, c.Y)
			apply(c.XExtra, c.YExtra)
			apply(c.XTest, c.YTest)
		}
	}
	ds.XMean, ds.XStd, ds.YMean, ds.YStd = xm, xs, ym, ys
}

// sampleGP draws f ~ GP(poly, SE(ℓ, variance 1)) at x.
func sampleGP(x, coef []float64, ell float64, rng *rand.Rand) ([]float64, error) {
	n := len(x)
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d := (x[i] - x[j]) / ell
			k.SetSym(i, j, math.Exp(-0.5*d*d))
		}
	}
	// The SE kernel on many close points is numerically singular: add a
	// jitter far below the observation noise, growing until it factorises.
	var ch mat.Cholesky
	ok := false
	for jit := 1e-8; jit <= 1e-2; jit *= 10 {
		kj := mat.NewSymDense(n, nil)
		kj.CopySym(k)
		for i := 0; i < n; i++ {
			kj.SetSym(i, i, kj.At(i, i)+jit)
		}
		if ch.Factorize(kj) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, errors.New("SE kernel matrix not positive definite even with jitter 1e-2")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := make([]float64, n)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	f := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j <= i; j++ {
			s += l.At(i, j) * z[j]
		}
		p := 0.0
		for j := len(coef) - 1; j >= 0; j-- {
			p = p*x[i] + coef[j]
		}
		f[i] = p + s
	}
	return f, nil
}

// streamID mixes a tag and indices into one 64-bit PCG stream selector
// (splitmix64 finaliser), so that streams for different purposes never
// coincide.
func streamID(tag uint64, idx ...uint64) uint64 {
	h := tag ^ 0x9e3779b97f4a7c15
	for _, v := range idx {
		h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}
