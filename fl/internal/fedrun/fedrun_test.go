package fedrun

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestRunAveragesByWeight(t *testing.T) {
	weights := []float64{1, 2, 3, 4}
	global := []float64{0, 0}
	// Client i returns (global[0] + i, i²): after one round with all clients
	// the global vector is the weighted mean.
	local := func(i, _ int, g, out []float64, _ *rand.Rand) error {
		out[0], out[1] = g[0]+float64(i), float64(i*i)
		return nil
	}
	if err := Run(4, 0, 1, weights, global, 1, 7, local); err != nil {
		t.Fatal(err)
	}
	want0 := (0*1 + 1*2 + 2*3 + 3*4) / 10.0
	want1 := (0*1 + 1*2 + 4*3 + 9*4) / 10.0
	if math.Abs(global[0]-want0) > 1e-15 || math.Abs(global[1]-want1) > 1e-15 {
		t.Errorf("global %v, want [%v %v]", global, want0, want1)
	}
	if err := Run(4, 2, 1, weights[:3], global, 1, 7, local); err == nil {
		t.Error("3 weights for 4 clients accepted")
	}
	bad := func(i, _ int, g, out []float64, _ *rand.Rand) error {
		if i == 2 {
			return errors.New("boom")
		}
		return nil
	}
	if err := Run(4, 0, 1, weights, global, 1, 7, bad); err == nil {
		t.Error("a client's error was lost")
	}
}

// TestRunDeterministic: sampled clients and their random streams do not
// depend on GOMAXPROCS.
func TestRunDeterministic(t *testing.T) {
	run := func() []float64 {
		global := make([]float64, 3)
		local := func(i, round int, g, out []float64, rng *rand.Rand) error {
			for j := range out {
				out[j] = g[j] + rng.Float64() + float64(i*round)
			}
			return nil
		}
		if err := Run(9, 4, 20, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, global, 5, 3, local); err != nil {
			t.Fatal(err)
		}
		return global
	}
	prev := runtime.GOMAXPROCS(1)
	a := run()
	runtime.GOMAXPROCS(max(2, prev))
	b := run()
	runtime.GOMAXPROCS(prev)
	for j := range a {
		if a[j] != b[j] {
			t.Fatalf("GOMAXPROCS 1 gave %v, more gave %v", a, b)
		}
	}
}
