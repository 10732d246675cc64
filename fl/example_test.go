package fl_test

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// A complete federated run: 8 clients of the synthetic Polynomial data set
// train a hyper-posterior over GP priors (k = 2 particles, 300 rounds) and
// predict on their test sets and on those of 4 new clients that never took
// part (conditioning on their own 10 points). The paper's setting is larger:
// see `pacpfl experiment polynomial`.
func Example() {
	cfg := data.DefaultPolynomial()
	cfg.Existing, cfg.New, cfg.Test, cfg.Seed = 8, 4, 50, 3
	ds, err := data.Polynomial(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A small GP model: deep mean and kernel with one hidden layer of 8.
	g := fl.NewGPModel(ds.D)
	g.Model = lml.Model{D: ds.D, DF: 2, MeanHidden: []int{8}, KernelHidden: []int{8}}

	opt := fl.DefaultPACPFLOptions()
	opt.Server.K, opt.Server.Rounds, opt.Server.Seed = 2, 300, 1
	opt.Bounds.PriorSamples = 0 // no bounds in this example
	opt.Bounds.Learned = nil
	pac, err := fl.RunPACPFL(ds, g, opt, fl.MethodPACPFL)
	if err != nil {
		fmt.Println(err)
		return
	}
	curve := pac.Train.MeanLML
	fmt.Printf("trained %d particles of dimension %d in %d rounds\n", pac.Train.K, pac.Train.Dim, len(curve))
	fmt.Println("mean client LML improved:", curve[len(curve)-1] > curve[0])
	fmt.Printf("RSMSE: existing clients %.2f, new clients %.2f\n", pac.Existing.MeanRSMSE, pac.New.MeanRSMSE)
	// Output:
	// trained 2 particles of dimension 60 in 300 rounds
	// mean client LML improved: true
	// RSMSE: existing clients 0.54, new clients 0.51
}
