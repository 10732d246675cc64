package harness_test

import (
	"context"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// vanilla is the Vanilla baseline (one GP per client) as a harness.Method.
type vanilla struct{ steps int }

func (vanilla) Name() string { return fl.MethodVanilla }

func (v vanilla) Run(_ context.Context, ds *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	o := fl.DefaultVanillaOptions()
	o.Steps, o.Seed = v.steps, seed
	return fl.RunVanilla(ds, fl.NewGPModel(ds.D), o)
}

// Three seeds of a small Polynomial data set: the existing clients' RSMSE
// per seed and its mean ± 95 % CI.
func Example() {
	poly := func(seed uint64) (*data.Dataset, error) {
		c := data.DefaultPolynomial()
		c.Existing, c.New, c.Test, c.Extra, c.Seed = 4, 2, 30, 3, seed
		return data.Polynomial(c)
	}
	exp := harness.Experiment{Data: poly, Methods: []harness.Method{vanilla{steps: 5}}, Seeds: []uint64{1, 2, 3}}
	rep, err := harness.Run(context.Background(), exp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mr := rep.Method(fl.MethodVanilla)
	s := mr.Summary[harness.ExistingRSMSE]
	fmt.Printf("%d seeds, %d values, interval above zero: %v\n", len(rep.Seeds), len(mr.PerSeed[harness.ExistingRSMSE]),
		s.CI95 > 0)
	// Output: 3 seeds, 3 values, interval above zero: true
}
