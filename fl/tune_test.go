package fl

import (
	"errors"
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
	train, val := splitClients(ds, held, CVHalves)
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
	if _, err := CrossValidate(ds, smallGP(), base,
		CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{1}, Folds: 1}); err == nil {
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
	o := CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{0.5}, LRs: []float64{1e-2, 3e-2},
		Checkpoints: []int{20, 7, 20}, Folds: 2, Seed: 1}
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
				t.Fatalf("η=%g T=%d: checkpoint scores %v, a %d-round run scores %v", lr, T, pts[i].Folds, T,
					want[0].Folds)
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

// CVFuture holds out the same clients as CVHalves, trains the federation on
// the first half (in time) of every other client's S_i and scores each
// held-out client on its second half from its first: no scored sample is
// in the training federation, nor any sample of its time range.
func TestCVFoldsFuture(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(23))
	if err != nil {
		t.Fatal(err)
	}
	halves, err := CVFoldsBy(ds, 3, 7, CVHalves)
	if err != nil {
		t.Fatal(err)
	}
	future, err := CVFoldsBy(ds, 3, 7, CVFuture)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := CVFolds(ds, 3, 7)
	d := ds.D
	for f := range future {
		if len(plain[f].Val) != len(halves[f].Val) || !slices.Equal(plain[f].Val[0].YTest, halves[f].Val[0].YTest) {
			t.Fatalf("fold %d: CVFolds is not CVFoldsBy(…, CVHalves)", f)
		}
		tr, ht := future[f].Train.Existing, halves[f].Train.Existing
		if len(tr) != len(ht) || 2*len(future[f].Val) != len(halves[f].Val) {
			t.Fatalf("fold %d: %d/%d training clients, %d/%d validation clients", f, len(tr), len(ht),
				len(future[f].Val), len(halves[f].Val))
		}
		for j, c := range tr {
			full := ht[j]
			h := full.M() / 2
			if !slices.Equal(c.Y, full.Y[:h]) || !slices.Equal(c.X, full.X[:h*d]) || c.XTest != nil || c.XExtra != nil {
				t.Fatalf("fold %d training client %d is not the first half of S_i", f, j)
			}
		}
		for j, v := range future[f].Val {
			src := halves[f].Val[2*j] // conditions on the first half, scored on the second
			if !slices.Equal(v.Y, src.Y) || !slices.Equal(v.X, src.X) || !slices.Equal(v.YTest, src.YTest) ||
				!slices.Equal(v.XTest, src.XTest) {
				t.Fatalf("fold %d validation client %d: not first half → second half", f, j)
			}
			h := len(v.Y)
			if len(v.YTest) < h || h < 1 {
				t.Fatalf("fold %d validation client %d: %d context, %d scored", f, j, h, len(v.YTest))
			}
		}
	}
	if _, err := CVFoldsBy(ds, 3, 7, "bogus"); err == nil {
		t.Fatal("CVFoldsBy accepted split \"bogus\"")
	}
	base := PACPFLOptions{Server: Config{K: 2, Rounds: 20, LR: 1e-2, Tau: 0.5, Seed: 3}}
	o := CVOptions{Taus: []float64{0.5}, SigmaPs: []float64{0.5}, Folds: 2, Seed: 1, Split: CVFuture}
	pts, err := CrossValidate(ds, smallGP(), base, o)
	if err != nil || len(pts) != 1 || len(pts[0].Folds) != 2 || math.IsNaN(pts[0].RSMSE) {
		t.Fatalf("CrossValidate with CVFuture: %+v, %v", pts, err)
	}
	o.Split = "bogus"
	if _, err := CrossValidate(ds, smallGP(), base, o); err == nil {
		t.Fatal("CrossValidate accepted split \"bogus\"")
	}
}

func TestScoreGridStopsOrKeepsGoing(t *testing.T) {
	folds := []CVFold{{}, {Val: make([]data.ClientData, 1)}, {Val: make([]data.ClientData, 2)}}
	bad := errors.New("bad")
	score := func(i int, fold CVFold) ([]float64, error) {
		f := len(fold.Val)
		if i == 1 && f == 1 {
			return nil, bad
		}
		return []float64{float64(i), float64(10*i + f)}, nil
	}
	runs := 0
	stop := ScoreGrid(folds, CVGrid{Settings: 3, Score: score, Progress: func(done, total int) {
		runs = done
		if total != 9 {
			t.Fatalf("total %d, want 9", total)
		}
	}})
	if len(stop) != 2 || stop[1].Err != bad || len(stop[1].Folds[0]) != 1 || runs != 4 {
		t.Fatalf("fail-fast: %+v after %d runs", stop, runs)
	}
	if got := stop[0].Folds; len(got) != 2 || !slices.Equal(got[1], []float64{0, 1, 2}) {
		t.Fatalf("setting 0: %v", got)
	}
	all := ScoreGrid(folds, CVGrid{Settings: 3, Score: score, KeepGoing: true})
	if len(all) != 3 || all[2].Err != nil || !slices.Equal(all[2].Folds[1], []float64{20, 21, 22}) {
		t.Fatalf("keep going: %+v", all)
	}
}

func TestSortCVNaNLast(t *testing.T) {
	p := []float64{math.NaN(), 2, math.Inf(1), 1, 2}
	idx := []int{0, 1, 2, 3, 4}
	SortCV(idx, func(i int) float64 { return p[i] })
	if want := []int{3, 1, 4, 2, 0}; !slices.Equal(idx, want) {
		t.Fatalf("order %v, want %v", idx, want)
	}
}
