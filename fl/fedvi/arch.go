package fedvi

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/option"
)

// Arch is the network of FedVI's Figure 2 (docs/math.md §9): the embedding E
//
//	conv K×K C1 → ReLU → conv K×K C2 → ReLU → maxpool 2 → dropout Drop1 →
//	flatten → dense Embed → [ReLU if EmbedReLU] → dropout Drop2,
//
// its d = Embed features split into the first Global (global) and the last
// d − Global (local) ones, the posterior constructor P
//
//	dense PHidden → ReLU → dense PHidden → ReLU → dense (2·d_l + 1)·Classes,
//
// the global classifier G (one dense layer on the global features) and the
// local classifier L_β (the sampled d_l×Classes weights β plus P's bias).
// Convolutions are valid (no padding), stride 1.
type Arch struct {
	InChannels, InH, InW int     // 0 means 1×28×28
	Classes              int     // 0 means 10
	Conv1, Conv2         int     // output channels; 0 means 32 and 64
	Kernel               int     // 0 means 3
	Embed                int     // d; 0 means 128
	Global               int     // d_g; 0 means round(0.8·d) (102 of 128)
	PHidden              int     // 0 means 256
	Drop1, Drop2         float64 // dropout rates; negative means 0, 0 means 0.25 and 0.5
	// PoolOutputs applies P to every support image's global features and
	// averages its outputs (μ, ρ and the bias) over the support set;
	// false applies P once, to the support set's mean global features.
	// The paper leaves open how P, a map of one d_g-vector, takes a set (our choice).
	PoolOutputs bool
	// EmbedReLU puts a ReLU after E's dense layer, as Reddi et al.'s CNN
	// (the FedAvg network) has; the paper's E (dense 128 → dropout 0.5)
	// has none, so its features, local ones included, can be negative and
	// cannot die.
	EmbedReLU bool
}

// Paper is the FEMNIST architecture of the paper with |Y| classes on
// 28×28 greyscale images.
// P takes the support set's mean global features (PoolOutputs false,
// our choice: docs/math.md).
func Paper(classes int) Arch { return Arch{Classes: classes}.withDefaults() }

// WithDefaults is a with every zero size and rate replaced by its default
// (the paper's network).
func (a Arch) WithDefaults() Arch { return a.withDefaults() }

func (a Arch) withDefaults() Arch {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&a.InChannels, 1)
	def(&a.InH, 28)
	def(&a.InW, 28)
	def(&a.Classes, 10)
	def(&a.Conv1, 32)
	def(&a.Conv2, 64)
	def(&a.Kernel, 3)
	def(&a.Embed, 128)
	def(&a.Global, int(math.Round(0.8*float64(a.Embed))))
	def(&a.PHidden, 256)
	switch {
	case a.Drop1 == 0:
		a.Drop1 = 0.25
	case a.Drop1 < 0:
		a.Drop1 = 0
	}
	switch {
	case a.Drop2 == 0:
		a.Drop2 = 0.5
	case a.Drop2 < 0:
		a.Drop2 = 0
	}
	return a
}

// Local is d_l = d − d_g.
func (a Arch) Local() int { return a.Embed - a.Global }

// conv geometry: sizes after each stage.
func (a Arch) sizes() (h1, w1, h2, w2, hp, wp int) {
	h1, w1 = a.InH-a.Kernel+1, a.InW-a.Kernel+1
	h2, w2 = h1-a.Kernel+1, w1-a.Kernel+1
	return h1, w1, h2, w2, h2 / 2, w2 / 2
}

// Validate checks a (defaults filled) for sizes that cannot work.
func (a Arch) Validate() error {
	a = a.withDefaults()
	_, _, _, _, hp, wp := a.sizes()
	switch {
	case a.InChannels < 1 || a.InH < 1 || a.InW < 1 || a.Conv1 < 1 || a.Conv2 < 1 || a.Kernel < 1 ||
		a.Embed < 1 || a.PHidden < 1 || a.Classes < 2:
		return fmt.Errorf("fedvi: architecture %v: sizes must be ≥ 1 and classes ≥ 2", a)
	case hp < 1 || wp < 1:
		return fmt.Errorf("fedvi: a %d×%d input is too small for two %d×%d convolutions and a 2×2 pooling", a.InH,
			a.InW, a.Kernel, a.Kernel)
	case a.Global < 1 || a.Global >= a.Embed:
		return fmt.Errorf("fedvi: %d global of %d features: want 1 ≤ d_g < d (at least one local feature)", a.Global,
			a.Embed)
	case !(a.Drop1 >= 0 && a.Drop1 < 1) || !(a.Drop2 >= 0 && a.Drop2 < 1):
		return fmt.Errorf("fedvi: dropout rates %v and %v must lie in [0, 1)", a.Drop1, a.Drop2)
	}
	return nil
}

// String is a one-line description.
func (a Arch) String() string {
	a = a.withDefaults()
	pool := "mean features"
	if a.PoolOutputs {
		pool = "outputs averaged"
	}
	relu := ""
	if a.EmbedReLU {
		relu = " → relu"
	}
	return fmt.Sprintf("E: %d×%d×%d → conv%d(%d×%d) → conv%d → pool2 → drop%.2g → dense%d%s → drop%.2g; d_g %d, d_l "+
		"%d; P: %d-%d-%d (%s); |Y| %d",
		a.InChannels, a.InH, a.InW, a.Conv1, a.Kernel, a.Kernel, a.Conv2, a.Drop1, a.Embed, relu, a.Drop2,
		a.Global, a.Local(), a.PHidden, a.PHidden, (2*a.Local()+1)*a.Classes, pool, a.Classes)
}

// The names of the two ways of PoolOutputs, for a front end (PoolName,
// ParsePool).
const (
	PoolNameOutputs  = "outputs"
	PoolNameFeatures = "features"
)

// PoolName names the way of PoolOutputs outputs.
func PoolName(outputs bool) string {
	if outputs {
		return PoolNameOutputs
	}
	return PoolNameFeatures
}

// ParsePool is the PoolOutputs of the way called name; another name is an
// *option.FieldError on Arch.PoolOutputs.
func ParsePool(name string) (outputs bool, err error) {
	switch name {
	case PoolNameOutputs, PoolNameFeatures:
		return name == PoolNameOutputs, nil
	}
	return false, option.Custom("", []string{"Arch.PoolOutputs"}, []any{name}, func(n []string) string {
		return fmt.Sprintf("%s %q: want %s or %s", n[0], name, PoolNameOutputs, PoolNameFeatures)
	})
}
