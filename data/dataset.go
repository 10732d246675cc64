package data

import "math"

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
	Classes  int // C for classification (Y holds 0..C−1); 0 for regression
	Existing []ClientData
	New      []ClientData
	// Standardisation applied to every input and target of the set:
	// x ← (x − XMean)/XStd, y ← (y − YMean)/YStd. Nil XMean and XStd (image
	// sets): not standardised.
	XMean, XStd []float64
	YMean, YStd float64
	// Notes are what a user should know about how the set was built, for
	// example that some clients got fewer images than the protocol asks
	// for; the CLI prints them.
	Notes []string
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

// standardise rescales inputs and targets of every client with the mean and
// population std of the pooled existing-client training data S_1..S_n (the
// only data a server could legitimately summarise); class labels
// (Classes > 0) are left as they are.
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
	if ds.Classes > 0 {
		ym, ys = 0, 1 // class labels are not scaled
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
