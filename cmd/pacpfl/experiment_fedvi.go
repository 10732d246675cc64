package main

import (
	"flag"
	"io"

	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/methods"
)

// fedviFlags are the settings of the FedVI-family methods. The defaults
// (150 rounds of 30 clients, evaluation over the last 10) are sized for
// the README's command (300 + 100 clients sharing 60,000 of Fashion-MNIST's
// 70,000 images): one seed of fedvi and fedvi-fedavg within 30 minutes of
// two idle cores (docs/math.md, "FedVI"); the paper's 1500 rounds over 100
// clients per round are out of reach there.
type fedviFlags struct {
	o    fedvi.Options // the flags' FedVI settings (the network's classes: methods.FedVI fills them in)
	ft   fedvi.FineTune
	pool string
	// fedavgReLU: the FedAvg rows train E with a ReLU after dense 128
	// (Reddi et al.'s CNN; the default) or FedVI's own E without it.
	fedavgReLU bool
	// withFT: fedvi-fedavg-ft is among the methods; without it the FedAvg
	// run skips the fine-tuning.
	withFT bool
}

func init() {
	fmnistMethodFlags = append(fmnistMethodFlags, func() methodFlags { return &fedviFlags{} })
}

func (v *fedviFlags) add(fs *flag.FlagSet) { addFedVIFlags(fs, v) }

// settings are the options of FedVI and of FedAvg on its network.
func (v *fedviFlags) settings(s *methods.Settings, _ *fmnistExperiment, _ uint64) error {
	vo := v.options()
	ao, ft := vo, v.ft
	ao.Arch.EmbedReLU = v.fedavgReLU
	if !v.withFT {
		ft.Epochs = 0
	}
	s.FedVI, s.FedVIFedAvg, s.FedVIFineTune = &vo, &ao, &ft
	return nil
}

func (v *fedviFlags) note(io.Writer, *fmnistExperiment) {}

func addFedVIFlags(fs *flag.FlagSet, v *fedviFlags) {
	v.o, v.ft = fedvi.DefaultOptions(), fedvi.DefaultFineTune()
	o := &v.o
	o.Rounds, o.ClientsPerRound, o.EvalLast = 150, 30, 10
	fs.IntVar(&o.Rounds, "fedvi-rounds", o.Rounds, "fedvi, fedvi-fedavg: communication rounds T")
	fs.IntVar(&o.ClientsPerRound, "fedvi-clients-per-round", o.ClientsPerRound, "fedvi, fedvi-fedavg: clients "+
		"sampled per round (0: all); 30 chosen on seed 2 of the README's split, 300 + 100 clients sharing 60,000 "+
		"images (docs/math.md)")
	fs.IntVar(&o.EvalLast, "fedvi-eval-last", o.EvalLast, "fedvi, fedvi-fedavg: the accuracy is also reported as "+
		"the mean over this many last rounds (the paper: 100 of 1500)")
	fs.IntVar(&o.Batch, "fedvi-batch", o.Batch,
		"fedvi, fedvi-fedavg: client mini-batch (FedVI: first half support, second half query)")
	fs.Float64Var(&o.Tau, "fedvi-tau", o.Tau, "fedvi: τ, the weight of the local KL")
	fs.Float64Var(&o.ClientLR, "fedvi-client-lr", o.ClientLR, "fedvi, fedvi-fedavg: client SGD step")
	fs.Float64Var(&o.ServerLR, "fedvi-server-lr", o.ServerLR,
		"fedvi, fedvi-fedavg: server SGD step (with momentum 0.9)")
	fs.StringVar(&v.pool, "fedvi-pool", poolName(o.Arch.PoolOutputs), "fedvi: how P takes the support set: outputs "+
		"(P on every image, its outputs averaged) or features (P on the mean global features)")
	fs.BoolVar(&o.Arch.EmbedReLU, "fedvi-embed-relu", o.Arch.EmbedReLU, "fedvi: a ReLU after E's dense 128 as in "+
		"Reddi et al.'s CNN (the paper's E has none; the FedAvg rows' E: --fedvi-fedavg-embed-relu)")
	fs.BoolVar(&v.fedavgReLU, "fedvi-fedavg-embed-relu", true, "fedvi-fedavg, fedvi-fedavg-ft: a ReLU after E's "+
		"dense 128 (Reddi et al.'s CNN); false: FedVI's own E (the seed's, without it)")
	fs.IntVar(&v.ft.Epochs, "fedvi-ft-epochs", v.ft.Epochs, "fedvi-fedavg-ft: local fine-tuning epochs")
}

// check validates the flags before any data is read.
func (v *fedviFlags) check(x *fmnistExperiment) error {
	v.withFT = x.has(methods.MethodFedVIFedAvgFT)
	switch o := &v.o; {
	case o.Rounds < 1:
		return usagef("--fedvi-rounds %d must be ≥ 1", o.Rounds)
	case o.ClientsPerRound < 0:
		return usagef("--fedvi-clients-per-round %d must be ≥ 0", o.ClientsPerRound)
	case o.EvalLast < 1 || o.EvalLast > o.Rounds:
		return usagef("--fedvi-eval-last %d must be in [1, --fedvi-rounds = %d]", o.EvalLast, o.Rounds)
	case v.ft.Epochs < 1:
		return usagef("--fedvi-ft-epochs %d must be ≥ 1", v.ft.Epochs)
	case v.pool != poolName(true) && v.pool != poolName(false):
		return usagef("--fedvi-pool %q: want %s or %s", v.pool, poolName(true), poolName(false))
	}
	o := v.options()
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// options are FedVI's options of the flags.
func (v *fedviFlags) options() fedvi.Options {
	o := v.o
	o.Arch.PoolOutputs = v.pool == poolName(true)
	return o
}

// poolName is --fedvi-pool's value for Arch.PoolOutputs.
func poolName(outputs bool) string {
	if outputs {
		return "outputs"
	}
	return "features"
}
