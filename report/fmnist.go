package report

import (
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/harness"
)

// FMNIST is the --json report of pacpfl experiment fmnist: each
// classification method's test metrics over the seeds on a federated split
// of Fashion-MNIST.
type FMNIST struct {
	Dataset   string                  `json:"dataset"`           // fmnist
	Partition string                  `json:"partition"`         // labels5 or dirichlet
	Split     string                  `json:"split,omitempty"`   // labels5: small, medium or large
	Alpha     float64                 `json:"alpha,omitempty"`   // dirichlet: concentration of the label proportions
	Clients   int                     `json:"clients,omitempty"` // dirichlet: participating clients
	Seeds     []uint64                `json:"seeds"`
	Methods   map[string]*ClassMethod `json:"methods"` // by method name (pacpfl, fedvi, pfedbayes, …)

	split data.ImageSplit // for WriteFooter
}

// NewFMNIST is the report of methods run over seeds on Fashion-MNIST split
// by s: its partition with that partition's own settings.
func NewFMNIST(s data.ImageSplit, seeds []uint64, methods map[string]*ClassMethod) FMNIST {
	r := FMNIST{Dataset: "fmnist", Partition: s.Partition, Seeds: seeds, Methods: methods, split: s}
	if s.Partition == data.PartitionLabels5 {
		r.Split = s.Split
	} else {
		r.Alpha, r.Clients = s.Dirichlet.Alpha, s.Dirichlet.Clients
	}
	return r
}

// ClassMethod is one method's figures in an FMNIST report.
type ClassMethod struct {
	// Existing is the personalised models on the participating clients'
	// test sets, New the method's models for the held-out clients.
	Existing ClassGroup `json:"existing"`
	New      ClassGroup `json:"new"`
	// Global is a federated method's global model on the participating
	// clients' test sets (nil for a method without one).
	Global *ClassGroup `json:"global,omitempty"`
	// BestRounds is the window of rounds ("700-800") of the groups' Best.
	BestRounds string `json:"best_over_rounds,omitempty"`
	// RoundSeconds is a federated method's training time per round (its
	// evaluations excluded), averaged over the seeds.
	RoundSeconds float64 `json:"seconds_per_round,omitempty"`
	// PerClient holds the per-client values (plot experiment's box plots).
	PerClient PerClient `json:"per_client"`
	// Seconds is the method's time over all seeds (the text table's; not
	// written).
	Seconds float64 `json:"-"`
	// Weighted is the FedVI paper's metric: the FedVI-family methods on
	// either partition, every method on the dirichlet one.
	Weighted *WeightedGroups `json:"accuracy_weighted,omitempty"`
}

// ClassGroup is one group's classification metrics over the seeds:
// accuracy in percent after the last round and the calibration error (42),
// and for the pFedBayes family the best accuracy over the window of rounds
// its paper reports (nil otherwise). Null where undefined (no clients, the
// CI of one seed).
type ClassGroup struct {
	Accuracy Summary  `json:"accuracy"`
	CE       Summary  `json:"ce"`
	Best     *Summary `json:"best_accuracy,omitempty"`
}

// NewClassMethod is a method's groups from its per-seed values by metric
// key (harness.SeedValues' keys for classification: existing_accuracy,
// global_ce, best_existing, …) and its per-client values; the caller adds
// BestRounds, RoundSeconds and Weighted.
func NewClassMethod(perSeed map[string][]float64, perClient PerClient) *ClassMethod {
	v := perSeed
	m := &ClassMethod{
		Existing:  ClassGroup{Accuracy: Summarise(v[harness.ExistingAccuracy]), CE: Summarise(v[harness.ExistingCE])},
		New:       ClassGroup{Accuracy: Summarise(v[harness.NewAccuracy]), CE: Summarise(v[harness.NewCE])},
		PerClient: perClient,
	}
	if len(v[harness.GlobalAccuracy]) > 0 {
		m.Global = &ClassGroup{Accuracy: Summarise(v[harness.GlobalAccuracy]), CE: Summarise(v[harness.GlobalCE])}
	}
	if b := v[harness.BestExisting]; len(b) > 0 {
		s := Summarise(b)
		m.Existing.Best = &s
	}
	if b := v[harness.BestGlobal]; len(b) > 0 && m.Global != nil {
		s := Summarise(b)
		m.Global.Best = &s
	}
	return m
}

// WeightedGroups are the FedVI paper's metric, accuracy (%) weighted by the
// clients' test-set sizes, of both groups.
type WeightedGroups struct {
	Existing Weighted `json:"existing"` // the participating clients
	New      Weighted `json:"new"`      // the non-participating ones
	// GlobalModel: the participating figure is the method's global model
	// (FedAvg, FedProx: they have no personalised one).
	GlobalModel bool `json:"existing_is_global_model,omitempty"`
	// History: seed → the evaluated rounds' weighted accuracies (methods
	// evaluated after training only have none).
	History [][]FedVIRound `json:"history,omitempty"`
}

// Weighted is one group's weighted accuracy over the seeds: after the
// final round, and averaged over the last LastRoundsNum evaluated rounds
// (1 for a method evaluated after training only).
type Weighted struct {
	Final         Summary `json:"final"`
	LastRounds    Summary `json:"last_rounds_mean"`
	LastRoundsNum int     `json:"last_rounds"`
}

// FedVIRound is one evaluated round's weighted accuracies (%), null for a
// group without clients.
type FedVIRound struct {
	Round    int   `json:"round"`
	Existing Float `json:"existing"`
	New      Float `json:"new"`
}
