package main

import (
	"flag"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
)

// pvFlags are the flags of the PV data set (experiment pv, tune pv), bound
// to the fields of cfg.
type pvFlags struct {
	on  bool
	cfg data.PVConfig
}

// regressionFlags are the training flags of experiment or tune on dsName
// with their defaults, which -h shows: the paper's Table 6 clients, and on
// pv PAC-PFL's (and pFedGP's) PV server settings of methods.DefaultPACPFL
// and Vanilla's Adam steps, chosen by 5-fold cross-validation on
// PV-EW(150) seed 1000 (docs/math.md, "PV defaults by cross-validation" and
// "PV: where PAC-PFL's test error comes from"); on Polynomial the paper's.
func regressionFlags(dsName string) trainFlags {
	f := newTrainFlags()
	f.poly.Existing = papers.Table6Clients
	if dsName == "pv" { // known presets
		m, _ := methods.DefaultPACPFL(methods.PV)
		v, _ := methods.DefaultVanilla(methods.PV)
		f.o, f.baselineSteps = m.Options, v.Options.Steps
	}
	return f
}

// addPVFlags registers --variant and --samples when dsName is pv.
func addPVFlags(fs *flag.FlagSet, dsName string) *pvFlags {
	p := &pvFlags{on: dsName == "pv", cfg: data.DefaultPV()}
	if p.on {
		fs.StringVar(&p.cfg.Variant, "variant", p.cfg.Variant,
			"PV data set: s (roofs facing roughly south) or ew (east and west roofs: two modes)")
		fs.IntVar(&p.cfg.Train, "samples", p.cfg.Train,
			"training samples per house: 150 (first two weeks of June) or 610 (June and July)")
	}
	return p
}

// apply sets the flags' data set to PV.
func (p *pvFlags) apply(f *trainFlags) error {
	if !p.on {
		return nil
	}
	if err := p.cfg.Validate(); err != nil {
		return fieldUsage(err, flagsOf(map[string]string{"Train": "samples"})) // --variant, --samples
	}
	f.pv = &p.cfg
	return nil
}

// datasetKey names the data set in reports and selects the paper's column:
// polynomial, or pv-<variant>-<samples>.
func (f *trainFlags) datasetKey() string {
	if f.pv != nil {
		return f.pv.Key()
	}
	return "polynomial"
}
