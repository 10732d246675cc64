package methods_test

import (
	"context"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
)

// The k-sweep of experiment --k-sweep (the paper's Fig. 3) from Go: PAC-PFL
// with k = 1 and k = 3 particles on the same small Polynomial data sets, each
// level named by its Key in the report.
func Example_sweep() {
	poly := func(seed uint64) (*data.Dataset, error) {
		c := data.DefaultPolynomial()
		c.Existing, c.New, c.Test, c.Seed = 6, 2, 30, seed
		return data.Polynomial(c)
	}
	sweep := methods.Sweep{Data: poly, Seeds: []uint64{1, 2}}
	for _, k := range []int{1, 3} {
		m, err := methods.DefaultPACPFL(methods.Polynomial)
		if err != nil {
			fmt.Println(err)
			return
		}
		m.Options.Server.Rounds, m.Options.Server.K = 20, k
		m.Options.Bounds.PriorSamples, m.Options.Bounds.Learned = 0, nil
		m.Key = fmt.Sprintf("k=%d", k)
		sweep.Levels = append(sweep.Levels, m)
	}
	rep, err := sweep.Run(context.Background(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mr := range rep.Methods {
		fmt.Printf("%s: RSMSE existing %.2f, new %.2f\n", mr.Name,
			mr.Summary[harness.ExistingRSMSE].Mean, mr.Summary[harness.NewRSMSE].Mean)
	}
	// Output:
	// k=1: RSMSE existing 0.92, new 0.83
	// k=3: RSMSE existing 0.77, new 0.77
}

// GenFL's certificate run (experiment genfl: GenFL + FEDBOUND) from Go, on
// small synthetic images instead of Fashion-MNIST: the prior learnt on half
// of each user's training images, the posterior's certified 0–1 error from
// the other half beside its measured test error.
func Example_genFLBound() {
	o := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 0)
	o.Arch = genfl.Arch{In: 36, Hidden: []int{16}, Classes: 10}
	o.PriorFed.Rounds, o.PosteriorFed.Rounds, o.MC.N = 20, 5, 2000
	m := methods.GenFLBound{Options: o, Setting: methods.FLSOB}
	images := func(seed uint64) (*data.Dataset, error) {
		return data.Labels5(blobImages(seed, 600),
			data.Labels5Config{Train: 100, Test: 20, Seed: seed, Pixels: data.PixelsUnit})
	}
	exp := harness.Experiment{Data: images, Methods: []harness.Method{m}, Seeds: []uint64{1}}
	rep, err := harness.Run(context.Background(), exp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rep.Methods[0].Results[0].Detail.(*genfl.FLSOBResult)
	fmt.Printf("certified 0–1 error %.2f (probability ≥ %.2f), measured %.2f\n",
		r.Bound.Bound, r.Bound.Confidence, r.TestError)
	// Output: certified 0–1 error 0.04 (probability ≥ 0.94), measured 0.03
}
