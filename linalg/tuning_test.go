package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
)

// withTuning runs f with t in force and restores the untuned state.
func withTuning(t *testing.T, tu *Tuning, f func()) {
	t.Helper()
	if err := SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	defer SetTuning(nil)
	f()
}

// Every kernel of the current level, under a tuning with small blocks, gives
// the suite's Dgemm results (against naive loops) on both schedules.
func TestTuningEveryKernel(t *testing.T) {
	forceParallel(t)
	l := asm.Current()
	for _, k := range asm.GemmKernels(l) {
		for _, sb := range []int{0, 64} {
			tu := &Tuning{Level: l, Kernel: k.Name(), Blocking: Blocking{MC: tMC, KC: tKC, NC: tNC}, SharedBMax: sb}
			withTuning(t, tu, func() {
				nat := NewNative(2)
				if got := nat.kernel(); got != k {
					t.Fatalf("tuned kernel %s, call uses %s", k.Name(), got.Name())
				}
				if got := nat.Blocking(); got != tu.Blocking {
					t.Fatalf("tuned blocking %+v, call uses %+v", tu.Blocking, got)
				}
				rnd := rand.New(rand.NewPCG(5, uint64(sb)))
				for _, s := range [][3]int{{1, 1, 1}, {0, 3, 2}, {tMC + 1, tNC - 1, tKC + 1}, {37, 29, 41},
					{20, 20, 90}, {61, 3, 17}} {
					for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
						checkDgemm(t, rnd, k.Name(), nat, tr, blas.NoTrans, s[0], s[1], s[2], 1.5, 0.5)
					}
				}
			})
		}
	}
}

// A tuning that repeats the defaults changes no bit; a tuning for another
// level is not applied.
func TestTuningSameKernelBitwise(t *testing.T) {
	forceParallel(t)
	l := asm.Current()
	rnd := rand.New(rand.NewPCG(7, 7))
	const m, n, k = 83, 71, 301
	a, b := randMat(rnd, m, k, k), randMat(rnd, k, n, n)
	run := func() []float64 {
		c := make([]float64, m*n)
		NewNative(2).Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
		return c
	}
	want := run()
	same := &Tuning{Level: l, Kernel: asm.GemmKernelFor(l).Name(), Blocking: DefaultBlocking()}
	other := &Tuning{Level: l + 1, Blocking: Blocking{MC: 4, KC: 3, NC: 8}}
	if l == asm.Generic {
		other.Level = asm.AVX2
	}
	for name, tu := range map[string]*Tuning{"same": same, "other level": other} {
		withTuning(t, tu, func() {
			got := run()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s: C[%d] = %v, untuned %v", name, i, got[i], want[i])
				}
			}
		})
	}
}

func TestTuningValidate(t *testing.T) {
	l := asm.Current()
	for _, bad := range []*Tuning{
		{Level: l, Kernel: "avx9-1x1", Blocking: Blocking{1, 1, 1}},
		{Level: l, Blocking: Blocking{0, 1, 1}},
		{Level: l, Blocking: Blocking{1, 1 << 17, 1}},
		{Level: l, Blocking: Blocking{1, 1, 1}, SharedBMax: -1},
	} {
		if err := SetTuning(bad); err == nil {
			SetTuning(nil)
			t.Errorf("%+v accepted", bad)
		}
	}
	if CurrentTuning() != nil {
		t.Error("a refused tuning is in force")
	}
}

// The tuned path allocates nothing in steady state either.
func TestTuningNoAllocs(t *testing.T) {
	l := asm.Current()
	tu := &Tuning{Level: l, Kernel: asm.GemmKernels(l)[len(asm.GemmKernels(l))-1].Name(),
		Blocking: Blocking{MC: 48, KC: 64, NC: 96}}
	withTuning(t, tu, func() {
		rnd := rand.New(rand.NewPCG(1, 1))
		const n = 120
		a, b, c := randMat(rnd, n, n, n), randMat(rnd, n, n, n), make([]float64, n*n)
		nat := NewNative(1)
		f := func() { nat.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n) }
		f()
		if allocs := testing.AllocsPerRun(5, f); allocs != 0 {
			t.Errorf("%v allocations per tuned call", allocs)
		}
	})
}
