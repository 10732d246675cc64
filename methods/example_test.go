package methods_test

import (
	"context"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
)

// Two methods chosen by name from the registry, PAC-PFL (a few rounds, no
// bounds) and Pooled, on two seeds of a small Polynomial data set: their
// existing and new clients' RSMSE, mean over the seeds.
func Example() {
	pacpfl, err := methods.DefaultPACPFL(methods.Polynomial)
	if err != nil {
		fmt.Println(err)
		return
	}
	pacpfl.Options.Server.Rounds, pacpfl.Options.Server.K = 20, 2
	pacpfl.Options.Bounds.PriorSamples, pacpfl.Options.Bounds.Learned = 0, nil
	ms, err := methods.New([]string{"pacpfl", "pooled"}, methods.Settings{PACPFL: &pacpfl, BaselineSteps: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	poly := func(seed uint64) (*data.Dataset, error) {
		c := data.DefaultPolynomial()
		c.Existing, c.New, c.Test, c.Seed = 6, 2, 30, seed
		return data.Polynomial(c)
	}
	rep, err := harness.Run(context.Background(), harness.Experiment{Data: poly, Methods: ms, Seeds: []uint64{1, 2}},
		nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("| method | RSMSE existing | RSMSE new |")
	for _, mr := range rep.Methods {
		fmt.Printf("| %s | %.2f | %.2f |\n", methods.Label(mr.Name),
			mr.Summary[harness.ExistingRSMSE].Mean, mr.Summary[harness.NewRSMSE].Mean)
	}
	// Output:
	// | method | RSMSE existing | RSMSE new |
	// | PAC-PFL | 0.80 | 0.72 |
	// | Pooled | 1.77 | 1.58 |
}
