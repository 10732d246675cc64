package data

import "math/rand/v2"

// Blobs returns a tiny synthetic classification set (two classes, Gaussian
// blobs of std 0.5 at −(1, 1) and +(1, 1) in two features) for tests and
// examples: clients existing clients with m training and mTest test
// rows each, client i drawing class 1 with probability 0.2 + 0.6·i/(N−1),
// and one new client with balanced classes, all from the stream seed.
func Blobs(clients, m, mTest int, seed uint64) *Dataset {
	r := rand.New(rand.NewPCG(seed, 11))
	ds := &Dataset{Name: "blobs", D: 2, Classes: 2}
	draw := func(n int, p float64) ClientData {
		var c ClientData
		part := func(n int) ([]float64, []float64) {
			x, y := make([]float64, 2*n), make([]float64, n)
			for j := range y {
				if r.Float64() < p {
					y[j] = 1
				}
				x[2*j] = (2*y[j] - 1) + 0.5*r.NormFloat64()
				x[2*j+1] = (2*y[j] - 1) + 0.5*r.NormFloat64()
			}
			return x, y
		}
		c.X, c.Y = part(n)
		c.XTest, c.YTest = part(mTest)
		return c
	}
	for i := range clients {
		ds.Existing = append(ds.Existing, draw(m, 0.2+0.6*float64(i)/float64(max(clients-1, 1))))
	}
	ds.New = []ClientData{draw(m, 0.5)}
	return ds
}
