package main

import (
	"flag"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
)

// pvFlags are the flags of the PV data set (experiment pv, tune pv).
type pvFlags struct {
	on      bool
	variant string
	samples int
}

// PV defaults, chosen by 5-fold cross-validation on the training clients of
// PV-EW(150) seed 1000, a data set used for nothing else (pacpfl tune pv;
// docs/math.md, "PV defaults by cross-validation" and "PV: where PAC-PFL's
// test error comes from"): PAC-PFL's (and pFedGP's) server learning rate η,
// rounds T and hyper-prior std σ_P (--cv-split halves) and the server
// temperature τ (--cv-split future: validated on hours no training client
// saw; validation RSMSE 0.428 at τ = 0.005 against 0.547 at the earlier
// 0.2); the Adam steps and step size of Vanilla's and Pooled's LML fits are
// methods.PV's. The Polynomial defaults (fl.DefaultPACPFLOptions, …) stay as
// they were.
var (
	pvTrainDefaults = []struct{ flag, value string }{
		{"sigma-p", "0.5"}, {"lr", "0.01"}, {"rounds", "500"}, {"T", "500"}, {"tau", "0.005"},
	}
)

// addPVFlags registers --variant and --samples when dsName is pv, and makes
// the PV defaults those of the training flags already registered.
func addPVFlags(fs *flag.FlagSet, dsName string) *pvFlags {
	p := &pvFlags{on: dsName == "pv"}
	if p.on {
		for _, d := range pvTrainDefaults {
			if fs.Lookup(d.flag) != nil {
				setDefault(fs, d.flag, d.value)
			}
		}
		d := data.DefaultPV()
		fs.StringVar(&p.variant, "variant", d.Variant, "PV data set: s (roofs facing roughly south) or ew (east and west roofs: two modes)")
		fs.IntVar(&p.samples, "samples", d.Train, "training samples per house: 150 (first two weeks of June) or 610 (June and July)")
	}
	return p
}

// apply sets the flags' data set to PV.
func (p *pvFlags) apply(f *trainFlags) error {
	if !p.on {
		return nil
	}
	if p.variant != "s" && p.variant != "ew" {
		return usagef("--variant %q: want s or ew", p.variant)
	}
	if p.samples < 2 {
		return usagef("--samples %d: want at least 2 (the paper's are 150 and 610)", p.samples)
	}
	c := data.DefaultPV()
	c.Variant, c.Train = p.variant, p.samples
	f.pv = &c
	return nil
}

// datasetKey names the data set in reports and selects the paper's column:
// polynomial, or pv-<variant>-<samples>.
func (f *trainFlags) datasetKey() string {
	if f.pv != nil {
		return fmt.Sprintf("pv-%s-%d", f.pv.Variant, f.pv.Train)
	}
	return "polynomial"
}

// datasetTitle is the data set's name as the paper writes it.
func datasetTitle(key string) string {
	switch key {
	case "polynomial":
		return "Polynomial"
	case "pv-s-150":
		return "PV-S(150)"
	case "pv-ew-150":
		return "PV-EW(150)"
	case "pv-s-610":
		return "PV-S(610)"
	case "pv-ew-610":
		return "PV-EW(610)"
	}
	return key
}
