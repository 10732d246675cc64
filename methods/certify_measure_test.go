//go:build certmeasure

package methods

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// TestCertifyMeasure trains PAC-PFL with the defaults of `pacpfl train`
// (CERT_DATA=poly, the default) or of `experiment pv` (CERT_DATA=pv,
// PV-EW(150)) on seed CERT_SEED and prints the certificates of
// fl.CertifyGP with their terms: go test -tags certmeasure -run
// CertifyMeasure -v ./methods.
func TestCertifyMeasure(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("CERT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	var (
		ds  *data.Dataset
		err error
		co  = fl.GPCertifyOptions{Seed: seed, PriorModel: true, DataFree: os.Getenv("CERT_DATAFREE") != ""}
	)
	preset := Polynomial
	if os.Getenv("CERT_DATA") == "pv" {
		preset = PV
		c := data.DefaultPV()
		c.Seed = seed
		ds, err = data.PV(c)
		co.Certify = fl.CertifyOptions{
			Draws:  100,
			Widths: []float64{0.003, 0.01, 0.03},
			Scales: []float64{1, 0.3, 0.1},
		}
		co.TestDraws = 10
	} else {
		c := data.DefaultPolynomial()
		c.Seed = seed
		ds, err = data.Polynomial(c)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := DefaultPACPFL(preset)
	if err != nil {
		t.Fatal(err)
	}
	o := m.Options
	o.Server.Seed = seed
	o.Server.ClientsPerRound = min(len(ds.Existing), fl.DefaultClientsPerRound)
	o.Bounds.PriorSamples, o.Bounds.Learned = 0, nil
	start := time.Now()
	g := fl.NewGPModel(ds.D)
	res, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf(
		"trained in %v: RSMSE existing %.4f new %.4f\n",
		time.Since(start),
		res.Existing.MeanRSMSE,
		res.New.MeanRSMSE,
	)
	rep, err := fl.CertifyGP(ds, g, o, res.Train.Particles, co)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("certified in %v\n", time.Since(start))
	for _, line := range rep.Sentences() {
		fmt.Println(line)
	}
	rep.Split = fl.Split{}
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Printf("seed %d: %s\n", seed, b)
}
