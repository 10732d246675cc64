package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
)

// A Go program that runs the methods by name through the library gets the
// numbers the CLI writes: experiment polynomial's per-seed values equal, to
// the bit, harness.Run of methods.New with the same settings.
func TestLibraryRunEqualsCLI(t *testing.T) {
	skipIfRepeat(t)
	names := []string{"pacpfl", "pfedgp", "mtl", "vanilla", "pooled"}
	path := filepath.Join(t.TempDir(), "e.json")
	st, _, errs := runCLI("experiment", "polynomial", "--methods", "pacpfl,pfedgp,mtl,vanilla,pooled", "--seeds", "2",
		"--clients", "4", "--new-clients", "2", "-T", "5", "--k", "2", "--baseline-steps", "5", "--quiet", "--json",
		path)
	if st != exitOK {
		t.Fatalf("exit %d: %s", st, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cli struct {
		Methods map[string]struct {
			PerSeed map[string][]*float64 `json:"per_seed"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(b, &cli); err != nil {
		t.Fatal(err)
	}

	p, err := methods.DefaultPACPFL(methods.Polynomial)
	if err != nil {
		t.Fatal(err)
	}
	p.Options.Server.Rounds, p.Options.Server.K = 5, 2
	ms, err := methods.New(names, methods.Settings{PACPFL: &p, BaselineSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	poly := func(seed uint64) (*data.Dataset, error) {
		c := data.DefaultPolynomial()
		c.Existing, c.New, c.Seed = 4, 2, seed
		return data.Polynomial(c)
	}
	rep, err := harness.Run(context.Background(), harness.Experiment{Data: poly, Methods: ms, Seeds: []uint64{1, 2}},
		nil)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, mr := range rep.Methods {
		c, ok := cli.Methods[mr.Name]
		if !ok {
			t.Errorf("%s: not in the CLI's report", mr.Name)
			continue
		}
		for _, key := range []string{harness.ExistingRSMSE, harness.NewRSMSE} {
			got, want := mr.PerSeed[key], c.PerSeed[key]
			if len(got) != 2 || len(want) != 2 {
				t.Fatalf("%s %s: %d values from Go, %d from the CLI", mr.Name, key, len(got), len(want))
			}
			for i := range got {
				if want[i] == nil || math.Float64bits(got[i]) != math.Float64bits(*want[i]) {
					t.Errorf("%s %s seed %d: Go %v, CLI %v", mr.Name, key, i+1, got[i], want[i])
				}
				compared++
			}
		}
	}
	if compared != len(names)*2*2 {
		t.Errorf("compared %d values", compared)
	}
}
