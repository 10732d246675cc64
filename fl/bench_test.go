package fl

import (
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/svgd"
)

// BenchmarkRoundGP is one server round of the default PAC-PFL setting: c = 24
// clients of m_i = 10 points, k = 4 particles of the default GP model
// (2×32 mean and kernel networks), Adam SVGD step. Reports rounds/s.
func BenchmarkRoundGP(b *testing.B) {
	cfg := data.DefaultPolynomial()
	cfg.Existing, cfg.New = 24, 0
	ds, err := data.Polynomial(cfg)
	if err != nil {
		b.Fatal(err)
	}
	g := NewGPModel(1)
	o := DefaultPACPFLOptions()
	o.Server.Rounds = 1
	clients := make([]Client, len(ds.Existing))
	for i := range ds.Existing {
		if clients[i], err = g.NewClient(&ds.Existing[i]); err != nil {
			b.Fatal(err)
		}
	}
	prior, err := svgd.Isotropic(g.Model.HyperPriorMean(), o.SigmaP)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(o.Server, prior, clients)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
}
