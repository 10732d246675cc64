// Package papers holds the reference figures of the papers pacpfl
// reproduces, as the papers print them, for reports to set beside measured
// ones: the PAC-PFL paper's Table 6 (Boroujeni, Krause, Ferrari-Trecate),
// the pFedBayes paper's Table 1 Fashion-MNIST rows (Zhang et al. 2022),
// GenFL's Table 1 (Jobic, Haddouche, Guedj 2023) and the FedVI paper's
// FEMNIST figures (Vedadi et al.). A figure a paper does not give is NaN.
//
// The tables are read-only: every accessor returns a copy.
package papers

import (
	"math"
	"slices"

	"github.com/pacpfl/pacpfl/fl"
)

func sm(mean, ci float64) fl.Summary { return fl.Summary{Mean: mean, CI95: ci} }

var nan = fl.Summary{Mean: math.NaN(), CI95: math.NaN()}

// Table6Row is one method's figures of the PAC-PFL paper's Table 6: RSMSE
// and calibration error of the existing and the new clients, mean ± 95 %
// CI over 5 seeds (CE NaN for the point predictors MTL and MAML).
type Table6Row struct {
	ExistingRSMSE, ExistingCE, NewRSMSE, NewCE fl.Summary
}

func row(er, ec, nr, nc fl.Summary) Table6Row { return Table6Row{er, ec, nr, nc} }

// Table 6's method keys are pacpfl's method names.
const (
	mPACPFL  = "pacpfl"
	mPFedGP  = "pfedgp"
	mMTL     = "mtl"
	mMAML    = "maml"
	mVanilla = "vanilla"
	mPooled  = "pooled"
)

// table6 by data set (polynomial, pv-s-150, pv-ew-150, pv-s-610,
// pv-ew-610) and method.
var table6 = map[string]map[string]Table6Row{
	"polynomial": {
		mPACPFL:  row(sm(0.58, 0.05), sm(0.14, 0.02), sm(0.65, 0.02), sm(0.16, 0.01)),
		mPFedGP:  row(sm(0.80, 0.15), sm(0.12, 0.01), sm(0.87, 0.41), sm(0.15, 0.02)),
		mMTL:     row(sm(0.85, 0.15), nan, sm(0.88, 0.12), nan),
		mMAML:    row(sm(0.98, 0.13), nan, sm(1.11, 0.28), nan),
		mVanilla: row(sm(0.73, 0.07), sm(0.18, 0.01), sm(0.76, 0.05), sm(0.24, 0.03)),
		mPooled:  row(sm(2.33, 0.55), sm(0.33, 0.04), sm(2.32, 0.37), sm(0.36, 0.02)),
	},
	"pv-s-150": {
		mPACPFL:  row(sm(0.43, 0.02), sm(0.07, 0.00), sm(0.43, 0.02), sm(0.07, 0.00)),
		mPFedGP:  row(sm(0.48, 0.04), sm(0.07, 0.02), sm(0.46, 0.04), sm(0.07, 0.02)),
		mMTL:     row(sm(0.45, 0.00), nan, sm(0.44, 0.00), nan),
		mMAML:    row(sm(0.57, 0.02), nan, sm(0.55, 0.03), nan),
		mVanilla: row(sm(0.68, 0.02), sm(0.12, 0.01), sm(0.69, 0.02), sm(0.12, 0.01)),
		mPooled:  row(sm(0.48, 0.03), sm(0.26, 0.00), sm(0.48, 0.03), sm(0.26, 0.00)),
	},
	"pv-ew-150": {
		mPACPFL:  row(sm(0.41, 0.01), sm(0.04, 0.00), sm(0.42, 0.01), sm(0.04, 0.00)),
		mPFedGP:  row(sm(0.45, 0.01), sm(0.06, 0.01), sm(0.45, 0.02), sm(0.06, 0.01)),
		mMTL:     row(sm(0.43, 0.00), nan, sm(0.42, 0.00), nan),
		mMAML:    row(sm(0.52, 0.03), nan, sm(0.52, 0.01), nan),
		mVanilla: row(sm(0.63, 0.03), sm(0.12, 0.01), sm(0.63, 0.05), sm(0.12, 0.01)),
		mPooled:  row(sm(0.47, 0.05), sm(0.26, 0.01), sm(0.47, 0.05), sm(0.26, 0.01)),
	},
	"pv-s-610": {
		mPACPFL:  row(sm(0.42, 0.01), sm(0.07, 0.00), sm(0.43, 0.01), sm(0.07, 0.00)),
		mPFedGP:  row(sm(0.51, 0.03), sm(0.07, 0.00), sm(0.51, 0.05), sm(0.06, 0.01)),
		mMTL:     row(sm(0.44, 0.01), nan, sm(0.45, 0.00), nan),
		mMAML:    row(sm(0.58, 0.02), nan, sm(0.55, 0.01), nan),
		mVanilla: row(sm(0.49, 0.04), sm(0.04, 0.00), sm(0.69, 0.02), sm(0.12, 0.01)),
		mPooled:  row(sm(0.49, 0.02), sm(0.26, 0.01), sm(0.48, 0.02), sm(0.27, 0.00)),
	},
	"pv-ew-610": {
		mPACPFL:  row(sm(0.40, 0.01), sm(0.04, 0.00), sm(0.43, 0.01), sm(0.04, 0.00)),
		mPFedGP:  row(sm(0.46, 0.01), sm(0.05, 0.01), sm(0.46, 0.01), sm(0.06, 0.01)),
		mMTL:     row(sm(0.41, 0.00), nan, sm(0.43, 0.00), nan),
		mMAML:    row(sm(0.52, 0.02), nan, sm(0.53, 0.02), nan),
		mVanilla: row(sm(0.46, 0.02), sm(0.03, 0.00), sm(0.63, 0.52), sm(0.12, 0.01)),
		mPooled:  row(sm(0.46, 0.03), sm(0.27, 0.01), sm(0.46, 0.03), sm(0.27, 0.01)),
	},
}

// Table6 returns method's row of the PAC-PFL paper's Table 6 on data set
// (polynomial, pv-s-150, pv-ew-150, pv-s-610 or pv-ew-610) and whether
// the paper has one.
func Table6(dataset, method string) (Table6Row, bool) {
	r, ok := table6[dataset][method]
	return r, ok
}

// Table 6's Polynomial setting: 24 existing clients (12 per mode) and 24
// new ones; the paper's DP experiment (Fig. 4) used 120 existing clients.
const (
	Table6Clients    = 24
	Table6NewClients = 24
	DPClients        = 120
)

// PFedBayesRow is one method's Fashion-MNIST figures of the pFedBayes
// paper's Table 1 (labels5 protocol, 784-100-10 MLP) per split (small,
// medium, large): the personalised models' (PM) and the global model's
// (GM) accuracy in %, each the best over rounds 700–800, mean ± the
// spread the paper reports; nil where the method has no such model.
type PFedBayesRow struct {
	Method string
	PM, GM map[string]fl.Summary
}

var pFedBayesTable1 = []PFedBayesRow{
	{"pFedBayes", map[string]fl.Summary{"small": sm(89.05, 0.17), "medium": sm(91.95, 0.02), "large": sm(93.01, 0.10)},
		map[string]fl.Summary{"small": sm(80.17, 0.19), "medium": sm(82.33, 0.37), "large": sm(83.30, 0.28)}},
	{"pFedMe", map[string]fl.Summary{"small": sm(88.63, 0.07), "medium": sm(91.32, 0.08), "large": sm(92.02, 0.07)},
		map[string]fl.Summary{"small": sm(81.06, 0.14), "medium": sm(83.45, 0.21), "large": sm(84.41, 0.08)}},
	{"pFedGP", map[string]fl.Summary{"small": sm(86.99, 0.41), "medium": sm(90.53, 0.35), "large": sm(92.22, 0.13)},
		nil},
	{"HeurFedAMP", map[string]fl.Summary{"small": sm(86.38, 0.24), "medium": sm(89.82, 0.16), "large": sm(92.17, 0.12)},
		nil},
	{"Per-FedAvg", map[string]fl.Summary{"small": sm(79.79, 0.83), "medium": sm(84.90, 0.47), "large": sm(88.51, 0.28)},
		nil},
	{"FedAvg", nil,
		map[string]fl.Summary{"small": sm(81.51, 0.19), "medium": sm(83.90, 0.13), "large": sm(85.42, 0.14)}},
	{"FedProx", nil,
		map[string]fl.Summary{"small": sm(81.53, 0.08), "medium": sm(83.92, 0.21), "large": sm(85.32, 0.14)}},
	{"BNFed", nil,
		map[string]fl.Summary{"small": sm(66.54, 0.64), "medium": sm(69.68, 0.39), "large": sm(70.10, 0.24)}},
}

// PFedBayesTable1 returns the pFedBayes paper's Fashion-MNIST rows in the
// paper's order.
func PFedBayesTable1() []PFedBayesRow {
	out := make([]PFedBayesRow, len(pFedBayesTable1))
	for i, r := range pFedBayesTable1 {
		out[i] = PFedBayesRow{Method: r.Method, PM: cloneMap(r.PM), GM: cloneMap(r.GM)}
	}
	return out
}

func cloneMap(m map[string]fl.Summary) map[string]fl.Summary {
	if m == nil {
		return nil
	}
	out := make(map[string]fl.Summary, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// GenFLRow is one row of GenFL's Table 1 (MNIST, 100 users, GenFL +
// FEDBOUND): the prior (learnt or random), the objective, the certified
// bound and the measured test error of the stochastic classifier, and the
// KL penalty of the run as a note.
type GenFLRow struct {
	Prior, Objective string
	Bound, TestError float64
	Note             string
}

var genflTable1 = []GenFLRow{
	{"learnt", "f1", 0.039, 0.030, "no KL penalty"},
	{"learnt", "f2", 0.040, 0.030, "no KL penalty"},
	{"random", "f1", 0.333, 0.123, "KL penalty 0.1"},
	{"random", "f2", 0.342, 0.090, "KL penalty 0.1"},
}

// GenFLTable1 returns GenFL's Table 1 in the paper's order.
func GenFLTable1() []GenFLRow { return slices.Clone(genflTable1) }

// FedVIRow is a weighted accuracy (%) the FedVI paper reports on FEMNIST
// (weighted by the clients' test-set sizes): after the final round of the
// participating and of the new clients — the paper reports the mean over
// its last 100 of 1500 rounds (LastRounds) and no final-round figure
// (NaN).
type FedVIRow struct {
	Label                                string
	Final, LastRounds, NewFinal, NewLast float64
}

var fedviFEMNIST = []FedVIRow{
	{"FedVI (FedVI paper, FEMNIST, its CNN)", math.NaN(), 90.3, math.NaN(), 90.6},
	{"FedAvg (FedVI paper's Table 1, taken from Marfoq et al. 2022: FEMNIST, MobileNet-v2)", math.NaN(), 83.4,
		math.NaN(), 83.1},
}

// The FedVI paper's split as pacpfl runs it on Fashion-MNIST (docs/math.md,
// "FedVI"): 300 participating and 100 held-out clients sharing a random
// 60,000 of the 70,000 images, about 150 each, dealt by a Dirichlet over
// the labels.
const (
	FedVIClients    = 300
	FedVINewClients = 100
	FedVIImages     = 60000
)

// FedVIFEMNIST returns the FedVI paper's FEMNIST rows.
func FedVIFEMNIST() []FedVIRow { return slices.Clone(fedviFEMNIST) }

// genflTable2 is GenFL's Table 2 (MNIST, label-sorted shards, PFL): the
// mean over users of the per-user bound and test error.
var genflTable2 = []GenFLRow{
	{"learnt", "f1", 0.112, 0.050, ""},
	{"learnt", "f2", 0.111, 0.044, ""},
	{"random", "f1", 0.680, 0.552, ""},
	{"random", "f2", 0.713, 0.588, ""},
}

// GenFLTable2 returns GenFL's Table 2 in the paper's order.
func GenFLTable2() []GenFLRow { return slices.Clone(genflTable2) }
