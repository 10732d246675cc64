package fl

import (
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

// Vanilla and Pooled are reproducible and independent of GOMAXPROCS.
func TestBaselinesDeterministic(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(15))
	if err != nil {
		t.Fatal(err)
	}
	run := func(procs int) (*MethodResult, *MethodResult) {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		g := smallGP()
		v, err := RunVanilla(ds, g, VanillaOptions{Steps: 40, LR: 1e-2, InitSigma: 0.5, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		p, err := RunPooled(ds, g, PooledOptions{Points: 30, Steps: 40, LR: 1e-2, InitSigma: 0.5, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		return v, p
	}
	v1, p1 := run(1)
	v2, p2 := run(2)
	v3, _ := run(2)
	if !slices.Equal(v1.Existing.RSMSE, v2.Existing.RSMSE) || !slices.Equal(v2.New.CE, v3.New.CE) {
		t.Fatalf("vanilla not reproducible: %v vs %v vs %v", v1.Existing.RSMSE[:3], v2.Existing.RSMSE[:3],
			v3.Existing.RSMSE[:3])
	}
	if !slices.Equal(p1.Existing.RSMSE, p2.Existing.RSMSE) {
		t.Fatal("pooled not reproducible")
	}
}
