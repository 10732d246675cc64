package fl

import (
	"math"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

// The validation split uses only existing clients' training samples: the
// held-out clients leave the training federation, and their pseudo-clients
// condition on one half of S_i and are scored on the other.
func TestSplitClientsUsesTrainingDataOnly(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(21))
	if err != nil {
		t.Fatal(err)
	}
	held := []int{1, 5}
	train, val := splitClients(ds, held)
	if len(train.Existing) != len(ds.Existing)-2 || len(train.New) != 0 || len(val) != 4 {
		t.Fatalf("%d training clients, %d new, %d validation", len(train.Existing), len(train.New), len(val))
	}
	for _, c := range train.Existing {
		for _, h := range held {
			if slices.Equal(c.Y, ds.Existing[h].Y) {
				t.Fatal("a held-out client is in the training federation")
			}
		}
	}
	for j, v := range val {
		src := ds.Existing[held[j/2]]
		all := append(slices.Clone(v.Y), v.YTest...)
		slices.Sort(all)
		want := slices.Clone(src.Y)
		slices.Sort(want)
		if !slices.Equal(all, want) || len(v.XExtra) != 0 {
			t.Fatalf("validation client %d does not partition S_i of client %d", j, held[j/2])
		}
	}
}

// CrossValidate ranks a hyper-prior so narrow that nothing can be learnt
// below a usable one, scores every fold, and is reproducible.
func TestCrossValidateRanks(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(22))
	if err != nil {
		t.Fatal(err)
	}
	base := PACPFLOptions{Server: Config{K: 2, Rounds: 150, LR: 1e-2, Tau: 0.5, Seed: 3}}
	o := CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{1e-3, 0.5}, Folds: 2, Seed: 1}
	pts, err := CrossValidate(ds, smallGP(), base, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || len(pts[0].Folds) != 2 || math.IsNaN(pts[0].RSMSE) {
		t.Fatalf("points %+v", pts)
	}
	if pts[0].SigmaP != 0.5 || !(pts[0].RSMSE < pts[1].RSMSE) {
		t.Fatalf("σ_P = 1e-3 not ranked below 0.5: %+v", pts)
	}
	again, err := CrossValidate(ds, smallGP(), base, o)
	if err != nil || again[0].RSMSE != pts[0].RSMSE {
		t.Fatalf("not reproducible: %v vs %v (%v)", again[0].RSMSE, pts[0].RSMSE, err)
	}
	if _, err := CrossValidate(ds, smallGP(), base, CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{1}, Folds: 1}); err == nil {
		t.Fatal("1 fold accepted")
	}
}

// A run scored at several checkpoints gives, at each, exactly the score of
// a run of that many rounds (early stopping costs no extra training), and
// the learning rates of the grid are used.
func TestCrossValidateCheckpoints(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(23))
	if err != nil {
		t.Fatal(err)
	}
	base := PACPFLOptions{Server: Config{K: 2, Rounds: 999, LR: 1e-2, Tau: 0.5, Seed: 3}}
	o := CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{0.5}, LRs: []float64{1e-2, 3e-2}, Checkpoints: []int{20, 7, 20}, Folds: 2, Seed: 1}
	pts, err := CrossValidate(ds, smallGP(), base, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 {
		t.Fatalf("%d points for 2 learning rates × 2 checkpoints: %+v", len(pts), pts)
	}
	for _, lr := range o.LRs {
		for _, T := range []int{7, 20} {
			single := o
			single.LRs, single.Checkpoints = []float64{lr}, nil
			b := base
			b.Server.Rounds = T
			want, err := CrossValidate(ds, smallGP(), b, single)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(pts, func(p CVPoint) bool { return p.LR == lr && p.Rounds == T })
			if i < 0 || want[0].Rounds != T || want[0].LR != lr {
				t.Fatalf("η=%g T=%d missing: %+v / %+v", lr, T, pts, want)
			}
			if !slices.Equal(pts[i].Folds, want[0].Folds) {
				t.Fatalf("η=%g T=%d: checkpoint scores %v, a %d-round run scores %v", lr, T, pts[i].Folds, T, want[0].Folds)
			}
		}
	}
	if pts[0].RSMSE == pts[1].RSMSE && pts[1].RSMSE == pts[2].RSMSE {
		t.Fatal("every setting scored the same")
	}
	bad := o
	bad.Checkpoints = []int{0, 5}
	if _, err := CrossValidate(ds, smallGP(), base, bad); err == nil {
		t.Fatal("checkpoint 0 accepted")
	}
}
