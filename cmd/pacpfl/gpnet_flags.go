package main

import (
	"flag"
	"fmt"
	"slices"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/lml"
)

// gpNetFlags are the network sizes of the GP prior P_φ (its mean network and
// deep kernel), bound to an lml.Model, registered by experiment and tune for
// polynomial and pv.
type gpNetFlags struct {
	on bool      // registered
	m  lml.Model // DF, MeanHidden and KernelHidden (D: the data's)
}

// register registers --mean-hidden, --kernel-hidden and --df.
func (n *gpNetFlags) register(fs *flag.FlagSet) {
	n.on, n.m = true, lml.DefaultModel(0)
	n.m.MeanHidden, n.m.KernelHidden = slices.Clone(n.m.MeanHidden), slices.Clone(n.m.KernelHidden)
	fs.Var((*flagvalue.Widths)(&n.m.MeanHidden), "mean-hidden",
		`hidden-layer widths of the GP mean network m_φ of every GP method ("none": linear)`)
	fs.Var((*flagvalue.Widths)(&n.m.KernelHidden), "kernel-hidden",
		`hidden-layer widths of the deep-kernel network f_φ of every GP method ("none": linear)`)
	fs.IntVar(&n.m.DF, "df", n.m.DF, "output width of the deep-kernel network f_φ (kernel feature dimension)")
}

// model is the GP model of the flags for d inputs: the default networks
// where the flags are not registered.
func (n *gpNetFlags) model(d int) lml.Model {
	if !n.on {
		return lml.DefaultModel(d)
	}
	m := n.m
	m.D, m.MeanHidden, m.KernelHidden = d, slices.Clone(m.MeanHidden), slices.Clone(m.KernelHidden)
	return m
}

// validate reports network sizes that cannot be built (or not held in
// memory), before any work.
func (n *gpNetFlags) validate() error {
	if !n.on {
		return nil
	}
	m := n.model(1)
	what := fmt.Sprintf("--mean-hidden %s --kernel-hidden %s --df %d", widthText(m.MeanHidden),
		widthText(m.KernelHidden), m.DF)
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

// widthText is the widths as the flags write them ("none": no layer).
func widthText(w []int) string { return (*flagvalue.Widths)(&w).String() }

// text describes the networks for report headers.
func (n *gpNetFlags) text(d int) string {
	m := n.model(d)
	return fmt.Sprintf("mean network hidden %s, kernel network hidden %s → %d features", widthText(m.MeanHidden),
		widthText(m.KernelHidden), m.DF)
}
