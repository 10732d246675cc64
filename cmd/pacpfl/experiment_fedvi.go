package main

import (
	"flag"
	"io"

	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/methods"
)

// fedviFlags are the settings of the FedVI-family methods
// (methods.DefaultFedVIFamily's defaults).
type fedviFlags struct {
	f    methods.FedVIFamily
	pool string
}

// fedviFlagOf names the flags of methods.FedVIFamily's fields.
var fedviFlagOf = map[string]string{"FedVI.Rounds": "fedvi-rounds", "FedVI.ClientsPerRound": "fedvi-clients-per-round",
	"FedVI.EvalLast": "fedvi-eval-last", "FineTune.Epochs": "fedvi-ft-epochs", "Arch.PoolOutputs": "fedvi-pool"}

func init() {
	fmnistMethodFlags = append(fmnistMethodFlags, func() methodFlags { return &fedviFlags{} })
}

// settings are the options of FedVI and of FedAvg on its network, which
// skips the fine-tuning without fedvi-fedavg-ft among the methods.
func (v *fedviFlags) settings(s *methods.Settings, x *fmnistExperiment, _ uint64) {
	v.f.Set(s, x.has(methods.MethodFedVIFedAvgFT))
}

func (v *fedviFlags) note(io.Writer, *fmnistExperiment) {}

func (v *fedviFlags) add(fs *flag.FlagSet) {
	v.f = methods.DefaultFedVIFamily()
	o := &v.f.FedVI
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
	fs.StringVar(&v.pool, "fedvi-pool", fedvi.PoolName(o.Arch.PoolOutputs), "fedvi: how P takes the support set: "+
		"outputs (P on every image, its outputs averaged) or features (P on the mean global features)")
	fs.BoolVar(&o.Arch.EmbedReLU, "fedvi-embed-relu", o.Arch.EmbedReLU, "fedvi: a ReLU after E's dense 128 as in "+
		"Reddi et al.'s CNN (the paper's E has none; the FedAvg rows' E: --fedvi-fedavg-embed-relu)")
	fs.BoolVar(&v.f.FedAvgEmbedReLU, "fedvi-fedavg-embed-relu", v.f.FedAvgEmbedReLU, "fedvi-fedavg, "+
		"fedvi-fedavg-ft: a ReLU after E's dense 128 (Reddi et al.'s CNN); false: FedVI's own E (the seed's, "+
		"without it)")
	fs.IntVar(&v.f.FineTune.Epochs, "fedvi-ft-epochs", v.f.FineTune.Epochs, "fedvi-fedavg-ft: local fine-tuning epochs")
}

// check validates the flags before any data is read.
func (v *fedviFlags) check(*fmnistExperiment) error {
	var err error
	if v.f.FedVI.Arch.PoolOutputs, err = fedvi.ParsePool(v.pool); err == nil {
		err = v.f.Validate()
	}
	return fieldUsage(err, func(field string) string { return fedviFlagOf[field] })
}
