package main

import (
	"flag"
	"fmt"
	"slices"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// gpNetFlags are the network sizes of the GP prior P_φ (its mean network and
// deep kernel), registered by experiment and tune for polynomial and pv.
type gpNetFlags struct {
	on                       bool // registered
	meanHidden, kernelHidden widthList
	df                       int
}

// register registers --mean-hidden, --kernel-hidden and --df.
func (n *gpNetFlags) register(fs *flag.FlagSet) {
	n.on = true
	n.meanHidden = widthList(slices.Clone(lml.DefaultHidden))
	n.kernelHidden = widthList(slices.Clone(lml.DefaultHidden))
	fs.Var(&n.meanHidden, "mean-hidden", `hidden-layer widths of the GP mean network m_φ of every GP method ("none": linear)`)
	fs.Var(&n.kernelHidden, "kernel-hidden", `hidden-layer widths of the deep-kernel network f_φ of every GP method ("none": linear)`)
	fs.IntVar(&n.df, "df", lml.DefaultDF, "output width of the deep-kernel network f_φ (kernel feature dimension)")
}

// model is the GP model of the flags for d inputs: the default networks
// where the flags are not registered.
func (n *gpNetFlags) model(d int) lml.Model {
	if !n.on {
		return lml.DefaultModel(d)
	}
	return lml.Model{D: d, DF: n.df, MeanHidden: slices.Clone([]int(n.meanHidden)), KernelHidden: slices.Clone([]int(n.kernelHidden))}
}

// validate reports network sizes that cannot be built (or not held in
// memory), before any work.
func (n *gpNetFlags) validate() error {
	if !n.on {
		return nil
	}
	m := n.model(1)
	what := fmt.Sprintf("--mean-hidden %s --kernel-hidden %s --df %d", n.meanHidden.String(), n.kernelHidden.String(), n.df)
	if err := m.Validate(); err != nil {
		return usagef("%s: %v", what, err)
	}
	// φ, its gradient and the optimiser's state of one particle, at least.
	return memoryError(what, 8*3*float64(m.NumParams()))
}

// gpModel is the GP model of the flags for ds's inputs (pFedGP's linear
// mean replaces the mean network with none).
func (f *trainFlags) gpModel(d int, linearMean bool) *fl.GPModel {
	m := f.net.model(d)
	if linearMean {
		m.MeanHidden = nil
	}
	return &fl.GPModel{Model: m, Inference: f.inference()}
}

// netText describes the networks for report headers.
func (n *gpNetFlags) text(d int) string {
	m := n.model(d)
	mh, kh := widthList(m.MeanHidden), widthList(m.KernelHidden)
	return fmt.Sprintf("mean network hidden %s, kernel network hidden %s → %d features", mh.String(), kh.String(), m.DF)
}
