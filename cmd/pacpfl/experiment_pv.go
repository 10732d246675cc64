package main

import (
	"flag"
	"strconv"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/methods"
)

// pvFlags are the flags of the PV data set (experiment pv, tune pv), bound
// to the fields of cfg.
type pvFlags struct {
	on  bool
	cfg data.PVConfig
}

// pvTrainDefaults are the PV defaults of the training flags: PAC-PFL's (and
// pFedGP's) server settings of methods.DefaultPACPFL(methods.PV), chosen by
// 5-fold cross-validation on PV-EW(150) seed 1000 (docs/math.md, "PV
// defaults by cross-validation" and "PV: where PAC-PFL's test error comes
// from"). The Polynomial defaults stay the paper's.
func pvTrainDefaults() []struct{ flag, value string } {
	m, err := methods.DefaultPACPFL(methods.PV)
	if err != nil {
		panic(err) // a known preset
	}
	o := m.Options
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	t := strconv.Itoa(o.Server.Rounds)
	return []struct{ flag, value string }{
		{"sigma-p", g(o.SigmaP)}, {"lr", g(o.Server.LR)}, {"rounds", t}, {"T", t}, {"tau", g(o.Server.Tau)},
	}
}

// addPVFlags registers --variant and --samples when dsName is pv, and makes
// the PV defaults those of the training flags already registered.
func addPVFlags(fs *flag.FlagSet, dsName string) *pvFlags {
	p := &pvFlags{on: dsName == "pv", cfg: data.DefaultPV()}
	if p.on {
		for _, d := range pvTrainDefaults() {
			if fs.Lookup(d.flag) != nil {
				setDefault(fs, d.flag, d.value)
			}
		}
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
