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

// addPVFlags registers --variant and --samples when dsName is pv.
func addPVFlags(fs *flag.FlagSet, dsName string) *pvFlags {
	p := &pvFlags{on: dsName == "pv"}
	if p.on {
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
