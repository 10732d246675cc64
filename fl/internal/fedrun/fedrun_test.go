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

// TestRunHooks: the server hook receives the weighted mean and owns the
// step; AfterRound sees every round in order and can stop the run.
func TestRunHooks(t *testing.T) {
	weights := []float64{1, 3}
	global := []float64{1}
	local := func(i, _ int, g, out []float64, _ *rand.Rand) error {
		out[0] = g[0] + float64(i+1) // Δ_0 = 1, Δ_1 = 2
		return nil
	}
	var means []float64
	var seen []int
	h := Hooks{
		Server: func(round int, g, mean []float64) {
			means = append(means, mean[0])
			g[0] += 10 * (mean[0] - g[0]) // a server learning rate of 10
		},
		AfterRound: func(round int) error { seen = append(seen, round); return nil },
	}
	if err := RunHooks(2, 0, 2, weights, global, 1, 7, local, h); err != nil {
		t.Fatal(err)
	}
	// Round 1: mean = 1 + (1·1 + 3·2)/4 = 2.75, global = 1 + 10·1.75 = 18.5.
	// Round 2: mean = 18.5 + 1.75, global = 18.5 + 17.5 = 36.
	if len(means) != 2 || math.Abs(means[0]-2.75) > 1e-15 || math.Abs(means[1]-20.25) > 1e-15 || math.Abs(global[0]-36) > 1e-13 {
		t.Errorf("means %v, global %v; want [2.75 20.25], 36", means, global)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		t.Errorf("AfterRound saw rounds %v", seen)
	}
	stop := Hooks{AfterRound: func(round int) error {
		if round == 1 {
			return errors.New("enough")
		}
		return nil
	}}
	calls := 0
	count := func(i, _ int, g, out []float64, _ *rand.Rand) error { calls++; return nil }
	if err := RunHooks(1, 0, 5, []float64{1}, global, 1, 7, count, stop); err == nil || calls != 2 {
		t.Errorf("AfterRound's error: %v after %d client calls, want an error after 2", err, calls)
	}
}
