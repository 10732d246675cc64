package papers

import (
	"math"
	"testing"
)

// Every data set of Table 6 has the six methods; only the point predictors
// lack a CE.
func TestTable6Complete(t *testing.T) {
	for _, ds := range []string{"polynomial", "pv-s-150", "pv-ew-150", "pv-s-610", "pv-ew-610"} {
		for _, m := range []string{"pacpfl", "pfedgp", "mtl", "maml", "vanilla", "pooled"} {
			r, ok := Table6(ds, m)
			if !ok {
				t.Errorf("%s %s: missing", ds, m)
				continue
			}
			point := m == "mtl" || m == "maml"
			for _, s := range []float64{r.ExistingRSMSE.Mean, r.NewRSMSE.Mean} {
				if !(s > 0) {
					t.Errorf("%s %s: RSMSE %v", ds, m, s)
				}
			}
			if point != math.IsNaN(r.ExistingCE.Mean) || point != math.IsNaN(r.NewCE.Mean) {
				t.Errorf("%s %s: CE %v %v", ds, m, r.ExistingCE, r.NewCE)
			}
		}
	}
	if _, ok := Table6("polynomial", "fedavg"); ok {
		t.Error("a Table 6 row for FedAvg")
	}
}

// The accessors hand out copies.
func TestTablesAreCopies(t *testing.T) {
	a := PFedBayesTable1()
	a[0].PM["small"] = a[0].GM["small"]
	a[0].Method = "x"
	if b := PFedBayesTable1(); b[0].Method != "pFedBayes" || b[0].PM["small"].Mean != 89.05 {
		t.Errorf("pFedBayes table changed through a copy: %+v", b[0])
	}
	g := GenFLTable1()
	g[0].Bound = 9
	if GenFLTable1()[0].Bound != 0.039 {
		t.Error("GenFL table changed through a copy")
	}
}

// A certificate the paper printed is not below the error it measured.
func TestGenFLBoundsAreAboveTheirErrors(t *testing.T) {
	for _, rows := range [][]GenFLRow{GenFLTable1(), GenFLTable2()} {
		for _, r := range rows {
			if !(r.Bound >= r.TestError) {
				t.Errorf("%+v: bound below the test error", r)
			}
		}
	}
	for _, r := range FedVIFEMNIST() {
		if !(r.LastRounds > 0 && r.NewLast > 0) || !math.IsNaN(r.Final) {
			t.Errorf("%+v", r)
		}
	}
}
