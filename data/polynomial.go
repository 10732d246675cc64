package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// PolynomialConfig describes the synthetic Polynomial data set (docs/math.md §1.5, §10).
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
		rng := rand.New(rand.NewPCG(cfg.Seed, StreamID(0x706f6c79, uint64(idx))))
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

// MemoryBytes is a lower bound on the memory of the data set c describes:
// the inputs and targets of every sample (D = 1) in float64, counted in
// float64 so that an absurd size turns into a refusal, not an overflow.
func (c PolynomialConfig) MemoryBytes() float64 {
	samples := float64(c.Existing)*(float64(c.Train)+float64(c.Extra)+float64(c.Test)) +
		float64(c.New)*(float64(max(c.NewTrain, c.Train))+float64(c.Test))
	return 8 * 2 * samples
}
