package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
)

// NewFMNIST keeps the settings of the split's own partition, and the
// footer names the seeds, the split and its new clients.
func TestNewFMNIST(t *testing.T) {
	d := data.DirichletConfig{Alpha: 0.3, Clients: 7, New: 2, MaxImages: 500}
	methods := map[string]*ClassMethod{"pacpfl": {}}
	l5 := NewFMNIST(data.ImageSplit{Partition: data.PartitionLabels5, Split: "large", Dirichlet: d}, []uint64{4, 5},
		methods)
	assert.Equal(t, FMNIST{Dataset: "fmnist", Partition: "labels5", Split: "large", Seeds: []uint64{4, 5},
		Methods: methods, split: l5.split}, l5)
	dir := NewFMNIST(data.ImageSplit{Partition: data.PartitionDirichlet, Split: "large", Dirichlet: d}, []uint64{9},
		nil)
	assert.Equal(t, []any{"dirichlet", "", 0.3, 7}, []any{dir.Partition, dir.Split, dir.Alpha, dir.Clients})

	var b strings.Builder
	l5.WriteFooter(&b, 61.6)
	assert.Equal(t, "\n2 seeds (4..5), fmnist labels5 large (at most 500 images), 2 new clients, wall time 62s\n",
		b.String())
	b.Reset()
	dir.WriteFooter(&b, 0)
	assert.Equal(t, "\n1 seeds (9..9), fmnist dirichlet α=0.3 n=7 (at most 500 images), 2 new clients, wall time 0s\n",
		b.String())
}

// The baselines' note names their network with its size and the schedule.
func TestWriteFedBaselines(t *testing.T) {
	o := pfedbayes.DefaultOptions()
	o.Arch.Hidden, o.Rounds, o.LocalSteps, o.Batch = 10, 7, 3, 16
	var b strings.Builder
	WriteFedBaselines(&b, o)
	a := o.Arch.WithDefaults()
	assert.Equal(t, 784*10+10+10*10+10, a.NumWeights())
	assert.Equal(t, "\npFedBayes, FedAvg, FedProx: network "+a.String()+" (7960 weights), 7 rounds, R = 3 local "+
		"steps of b = 16\n", b.String())
}
