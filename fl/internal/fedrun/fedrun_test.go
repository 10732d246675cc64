package fedrun

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/pacpfl/pacpfl/data"
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
	if len(means) != 2 || math.Abs(means[0]-2.75) > 1e-15 || math.Abs(means[1]-20.25) > 1e-15 ||
		math.Abs(global[0]-36) > 1e-13 {
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

// With Aggregate = S every client trains but the server averages S of
// them: the mean of one-hot outputs has exactly S entries 1/S, the same
// ones at any GOMAXPROCS, and a different subset in another round.
func TestRunAggregate(t *testing.T) {
	const n, S = 6, 3
	ran := make([]int, n)
	run := func(rounds int) []float64 {
		global := make([]float64, n)
		local := func(i, _ int, _, out []float64, _ *rand.Rand) error {
			ran[i]++
			clear(out)
			out[i] = 1
			return nil
		}
		w := []float64{1, 1, 1, 1, 1, 1}
		if err := RunHooks(n, 0, rounds, w, global, 3, 9, local, Hooks{Aggregate: S}); err != nil {
			t.Fatal(err)
		}
		return global
	}
	g := run(1)
	for i, r := range ran {
		if r != 1 {
			t.Errorf("client %d trained %d times in one round", i, r)
		}
	}
	k := 0
	for _, v := range g {
		switch v {
		case 0:
		case 1.0 / S:
			k++
		default:
			t.Fatalf("mean %v is not S one-hots averaged", g)
		}
	}
	if k != S {
		t.Errorf("%d clients averaged, want %d", k, S)
	}
	prev := runtime.GOMAXPROCS(1)
	g1 := run(1)
	runtime.GOMAXPROCS(prev)
	for i := range g {
		if g[i] != g1[i] {
			t.Fatalf("GOMAXPROCS 1: %v, default %v", g1, g)
		}
	}
	same := true
	g2 := run(2)
	for i := range g {
		same = same && (g2[i] == 0) == (g[i] == 0)
	}
	if same {
		t.Error("round 2 averaged the clients of round 1")
	}
}

func TestForEachAndPool(t *testing.T) {
	out := make([]int, 50)
	made := 0
	var mu sync.Mutex
	p := NewPool(4, func() (*int, error) {
		mu.Lock()
		defer mu.Unlock()
		made++
		return new(int), nil
	})
	err := ForEach(len(out), func(i int) error {
		v, err := p.Get()
		if err != nil {
			return err
		}
		defer p.Put(v)
		out[i] = i * i
		if i == 7 || i == 30 {
			return errors.New(string(rune('a' + i)))
		}
		return nil
	})
	if err == nil || err.Error() != "h" {
		t.Errorf("error %v, want that of the lowest failing index", err)
	}
	for i, v := range out {
		if v != i*i {
			t.Fatalf("f(%d) did not run", i)
		}
	}
	if made > runtime.GOMAXPROCS(0) {
		t.Errorf("%d values made for %d workers", made, runtime.GOMAXPROCS(0))
	}
}

// Select replaces the sampled clients: only they run, each round's outputs
// are summed in the order Select gives (the bits show it), and the result
// does not depend on Workers. A bad selection is an error.
func TestRunSelect(t *testing.T) {
	weights := []float64{3, 1, 2, 5, 4}
	rounds := [][]int{{4, 0, 2}, {1}, {3, 2, 1, 0, 4}}
	run := func(workers int, order func([]int) []int) ([]float64, [][]int) {
		global := []float64{0.1, 0.2}
		var ran [][]int
		var mu sync.Mutex
		local := func(i, round int, g, out []float64, rng *rand.Rand) error {
			mu.Lock()
			for len(ran) <= round {
				ran = append(ran, nil)
			}
			ran[round] = append(ran[round], i)
			mu.Unlock()
			out[0] = g[0]/3 + rng.Float64()
			out[1] = g[1]*0.7 + 1/float64(i+3)
			return nil
		}
		h := Hooks{Workers: workers, Select: func(t int) []int { return order(rounds[t]) }}
		if err := RunHooks(5, 0, len(rounds), weights, global, 4, 9, local, h); err != nil {
			t.Fatal(err)
		}
		return global, ran
	}
	same := func(s []int) []int { return s }
	got, ran := run(1, same)
	for t0, want := range rounds {
		if len(ran[t0]) != len(want) {
			t.Errorf("round %d ran %v, selected %v", t0, ran[t0], want)
		}
	}
	// The reference: the weighted mean summed in Select's order.
	ref := []float64{0.1, 0.2}
	for t0, sel := range rounds {
		total := 0.0
		for _, i := range sel {
			total += weights[i]
		}
		next := make([]float64, 2)
		for _, i := range sel {
			rng := rand.New(rand.NewPCG(4, data.StreamID(9, uint64(t0), uint64(i))))
			o0, o1 := ref[0]/3+rng.Float64(), ref[1]*0.7+1/float64(i+3)
			f := weights[i] / total
			next[0] += f * o0
			next[1] += f * o1
		}
		ref = next
	}
	if math.Float64bits(got[0]) != math.Float64bits(ref[0]) || math.Float64bits(got[1]) != math.Float64bits(ref[1]) {
		t.Errorf("global %v, summed in Select's order %v", got, ref)
	}
	if g3, _ := run(3, same); g3[0] != got[0] || g3[1] != got[1] {
		t.Errorf("3 workers %v, 1 worker %v", g3, got)
	}
	for name, bad := range map[string][]int{"empty": {}, "repeat": {1, 1}, "range": {5}, "negative": {-1}} {
		global := []float64{0, 0}
		h := Hooks{Select: func(int) []int { return bad }}
		noop := func(int, int, []float64, []float64, *rand.Rand) error { return nil }
		if err := RunHooks(5, 0, 1, weights, global, 1, 1, noop, h); err == nil {
			t.Errorf("%s selection %v accepted", name, bad)
		}
	}
	if err := RunHooks(5, 0, 1, weights, []float64{0}, 1, 1, nil, Hooks{Workers: -1}); err == nil {
		t.Error("negative workers accepted")
	}
}

// Chosen hears each round's clients in slot order: the sampled ones, or
// Select's.
func TestChosenHearsTheRoundsClients(t *testing.T) {
	w := []float64{1, 2, 3, 4, 5}
	local := func(_, _ int, g, out []float64, _ *rand.Rand) error { copy(out, g); return nil }
	var got [][]int
	h := Hooks{Chosen: func(_ int, c []int) { got = append(got, slices.Clone(c)) }}
	if err := RunHooks(5, 2, 3, w, make([]float64, 1), 1, 2, local, h); err != nil {
		t.Fatal(err)
	}
	for r, c := range got {
		want := rand.New(rand.NewPCG(1, data.StreamID(2, 0x73656c, uint64(r)))).Perm(5)[:2]
		if !slices.Equal(c, want) {
			t.Errorf("round %d: heard %v, sampled %v", r, c, want)
		}
	}
	h.Select = func(int) []int { return []int{4, 0} }
	got = nil
	if err := RunHooks(5, 2, 2, w, make([]float64, 1), 1, 2, local, h); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[1], []int{4, 0}) {
		t.Errorf("heard %v, selected [4 0] twice", got)
	}
}

// With a quorum, a round's failed and outlying updates are left out and
// the mean is renormalised over the rest; too few answers end the run.
func TestRunHooksQuorum(t *testing.T) {
	weights := []float64{1, 2, 3, 4, 5}
	// Client i returns global + (i+1) in both coordinates, client 4 +100
	// in the first: client 1 fails, client 4's norm (≈ 100) is above 3 ×
	// the median √2·3 of the others', client 3's (√2·4) is not.
	local := func(i, _ int, g, out []float64, _ *rand.Rand) error {
		if i == 1 {
			return errors.New("gone")
		}
		for j := range out {
			out[j] = g[j] + float64(i+1)
		}
		if i == 4 {
			out[0] = g[0] + 100
		}
		return nil
	}
	var dropped []int
	global := []float64{0, 0}
	h := Hooks{Quorum: 3, MaxNormFactor: 3, OnDrop: func(r, c int, err error) {
		if r != 1 || err == nil {
			t.Errorf("drop in round %d: %v", r, err)
		}
		dropped = append(dropped, c)
	}}
	if err := RunHooks(5, 0, 1, weights, global, 1, 7, local, h); err != nil {
		t.Fatal(err)
	}
	slices.Sort(dropped)
	if !slices.Equal(dropped, []int{1, 4}) {
		t.Errorf("dropped %v, want [1 4]", dropped)
	}
	want := (1*1 + 3*3 + 4*4) / 8.0 // clients 0, 2, 3, weights renormalised
	if math.Abs(global[0]-want) > 1e-15 || math.Abs(global[1]-want) > 1e-15 {
		t.Errorf("global %v, want %v", global, want)
	}
	h.Quorum, h.OnDrop = 4, nil
	if err := RunHooks(5, 0, 1, weights, []float64{0, 0}, 1, 7, local, h); err == nil {
		t.Error("3 answers met a quorum of 4")
	}
	for _, bad := range []Hooks{{Quorum: 6}, {Quorum: -1}, {MaxNormFactor: 2}} {
		if err := RunHooks(5, 0, 1, weights, []float64{0, 0}, 1, 7, local, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
