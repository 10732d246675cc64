//go:build certmeasure

package fl

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/data"
)

// TestCertifyMeasure trains as `pacpfl train` does on Polynomial and prints
// the certificate's terms (go test -tags certmeasure -run CertifyMeasure).
func TestCertifyMeasure(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("CERT_SEED"); s != "" {
		v, _ := strconv.ParseUint(s, 10, 64)
		seed = v
	}
	cfg := data.DefaultPolynomial()
	cfg.Seed = seed
	ds, err := data.Polynomial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultPACPFLOptions()
	o.Server.Seed = seed
	o.Server.ClientsPerRound = min(len(ds.Existing), DefaultClientsPerRound)
	o.Bounds.PriorSamples = 0
	o.Bounds.Learned = nil
	start := time.Now()
	res, g, err := trainPACPFL(ds, NewGPModel(ds.D), o)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("trained in %v\n", time.Since(start))
	rep, err := CertifyGP(
		ds,
		g,
		o,
		res.Particles,
		GPCertifyOptions{Seed: seed, DataFree: os.Getenv("CERT_DATAFREE") != ""},
	)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("certified in %v\n", time.Since(start))
	d, k := g.Dim(), o.Server.K
	for κ := 0; κ < k; κ++ {
		s := 0.0
		for i := 0; i < d; i++ {
			x := res.Particles[κ*d+i] - rep.PriorParticles[κ*d+i]
			s += x * x
		}
		fmt.Printf("particle %d: |φ − φ_A| = %.4g (d = %d)\n", κ, math.Sqrt(s), d)
	}
	B := make([]data.ClientData, 0)
	for _, i := range rep.Split.B {
		B = append(B, ds.Existing[i])
	}
	ev := g.CertEval(B, 1)
	for _, sc := range DefaultCertScales {
		tt, _ := sumTerms(res.Particles[:d], sampleCounts(B), ev, sc)
		fmt.Printf(
			"scale %g at particle 0: loss %.4f KL %.1f priorloss %.4f\n",
			sc,
			tt.LossSum/float64(10*len(B)),
			tt.KL,
			tt.PriorLossSum/float64(10*len(B)),
		)
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Printf("seed %d: %s\n", seed, b)
}
