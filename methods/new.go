package methods

import (
	"errors"
	"fmt"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/option"
)

// Settings configure the methods New makes. The zero value gives every
// method its defaults on Polynomial (regression) or with the default BNN
// (classification); a nil option leaves that method at its defaults.
type Settings struct {
	// Task chooses between the regression and the classification method
	// of a name that has both (pacpfl, vanilla, pooled); "" is Regression.
	Task Task
	// Preset selects the regression defaults: Polynomial or PV.
	Preset Preset

	// GPModel makes the regression clients' model (nil: fl.NewGPModel).
	GPModel GPModel
	// PACPFL is PAC-PFL's regression configuration (nil: DefaultPACPFL
	// of Preset, with GPModel). pFedGP runs with its server settings, k
	// and σ_P of fl.DefaultPFedGPOptions and PAC-PFL's σ_P as its initial
	// σ; nil: DefaultPFedGP of Preset.
	PACPFL *PACPFL
	// PFedGPMean is pFedGP's GP mean: PFedGPLinear (""), PFedGPZero (the
	// original pFedGP) or PFedGPNet (PAC-PFL's mean network).
	PFedGPMean string
	// BaselineSteps > 0 replaces the preset's Adam steps of Vanilla's and
	// Pooled's fits.
	BaselineSteps int

	// BNNModel makes the classification clients' model (nil:
	// fl.NewBNNModel's default network).
	BNNModel BNNModel
	// PACPFLBNN is PAC-PFL's classification configuration (nil:
	// DefaultPACPFLBNN with BNNModel).
	PACPFLBNN *PACPFLBNN
	PFedBayes *pfedbayes.Options
	// FedAvg: FedAvg and FedAvg+FT (which share one training); FedProx:
	// FedProx (Mu > 0).
	FedAvg, FedProx *fedavg.Options
	FedVI           *fedvi.Options
	// FedVIFedAvg and FedVIFineTune: FedAvg and FedAvg+FT on FedVI's
	// network (nil: FedVI's options, fedvi.DefaultFineTune).
	FedVIFedAvg   *fedvi.Options
	FedVIFineTune *fedvi.FineTune
	GenFL         *genfl.Options
}

// pFedGP's GP means (Settings.PFedGPMean).
const (
	PFedGPLinear = "linear"
	PFedGPZero   = "zero"
	PFedGPNet    = "nn"
)

// ErrUnknownMethod is the error of New for a name the registry does not
// have for the task.
var ErrUnknownMethod = errors.New("methods: unknown method")

// New makes the methods named names for s.Task, in order, with the
// settings s, and validates each one. FedAvg and FedAvg+FT (on either
// network) made by one call share one training per seed. Its errors name
// the method; an unknown name wraps ErrUnknownMethod.
func New(names []string, s Settings) ([]harness.Method, error) {
	task := s.Task
	if task == "" {
		task = Regression
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b := builder{s: s}
	var out []harness.Method
	for _, name := range names {
		in, ok := Lookup(name)
		var m validated
		var err error
		switch {
		case !ok || !containsTask(in.Tasks, task):
			return nil, fmt.Errorf("%w %q for %s", ErrUnknownMethod, name, task)
		case task == Regression:
			m, err = b.regression(name)
		default:
			m, err = b.classification(name)
		}
		if err == nil {
			err = m.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func containsTask(ts []Task, t Task) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// validated is a method with its Validate.
type validated interface {
	harness.Method
	Validate() error
}

// builder makes the methods of one New call (the pairs that share a
// training are made once).
type builder struct {
	s              Settings
	avg, avgFT     *FedAvg
	viAvg, viAvgFT *FedVIFedAvg
}

func (b *builder) regression(name string) (validated, error) {
	s := b.s
	switch name {
	case fl.MethodPACPFL:
		if s.PACPFL != nil {
			return *s.PACPFL, nil
		}
		m, err := DefaultPACPFL(s.Preset)
		m.Model = s.GPModel
		return m, err
	case fl.MethodPFedGP:
		return b.pfedgp()
	case fl.MethodVanilla:
		v, err := DefaultVanilla(s.Preset)
		v.Model = s.GPModel
		if s.BaselineSteps > 0 {
			v.Options.Steps = s.BaselineSteps
		}
		return v, err
	case fl.MethodPooled:
		p, err := DefaultPooled(s.Preset)
		p.Model = s.GPModel
		if s.BaselineSteps > 0 {
			p.Options.Steps = s.BaselineSteps
		}
		return p, err
	case MTL{}.Name():
		return DefaultMTL(s.Preset)
	default: // MAML: the registry has no other regression method
		return DefaultMAML(s.Preset)
	}
}

// pfedgp is pFedGP from PAC-PFL's settings, or its defaults.
func (b *builder) pfedgp() (validated, error) {
	s := b.s
	var m PACPFL
	if s.PACPFL == nil {
		d, err := DefaultPFedGP(s.Preset)
		if err != nil {
			return nil, err
		}
		m = d.PACPFL
	} else {
		m = *s.PACPFL
		d := fl.DefaultPFedGPOptions()
		m.Options.Server.K, m.Options.InitSigma, m.Options.SigmaP = d.Server.K, m.Options.SigmaP, d.SigmaP
	}
	m.Key = ""
	m.Model = s.GPModel
	switch s.PFedGPMean { // checked by Validate
	case PFedGPLinear, "":
		m.Options.ZeroMean = false
		m.Model = linearMean(s.GPModel)
	case PFedGPZero:
		m.Options.ZeroMean = true
	default: // PFedGPNet
		m.Options.ZeroMean = false
	}
	return PFedGP{PACPFL: m}, nil
}

// Validate reports a setting no method can use: an unknown Preset, or an
// unknown PFedGPMean as an *option.FieldError.
func (s Settings) Validate() error {
	if err := s.Preset.check(); err != nil {
		return err
	}
	switch mean := s.PFedGPMean; mean {
	case PFedGPLinear, "", PFedGPZero, PFedGPNet:
		return nil
	default:
		return option.Custom("", []string{"PFedGPMean"}, []any{mean}, func(n []string) string {
			return fmt.Sprintf("unknown %s %q (want %s, %s or %s)", n[0], mean, PFedGPLinear, PFedGPZero, PFedGPNet)
		})
	}
}

// linearMean is g's model with a linear mean (no hidden layers).
func linearMean(g GPModel) GPModel {
	return func(d int) *fl.GPModel {
		m := *g.make(d)
		m.Model.MeanHidden = nil
		return &m
	}
}

func (b *builder) classification(name string) (validated, error) {
	s := b.s
	switch name {
	case fl.MethodPACPFL:
		m := DefaultPACPFLBNN()
		if s.PACPFLBNN != nil {
			m = *s.PACPFLBNN
		}
		if m.Model == nil {
			m.Model = s.BNNModel
		}
		return m, nil
	case fl.MethodVanilla:
		return VanillaBNN{Model: s.BNNModel}, nil
	case fl.MethodPooled:
		return PooledBNN{Model: s.BNNModel}, nil
	case pfedbayes.MethodPFedBayes:
		return PFedBayes{Options: orDefault(s.PFedBayes, pfedbayes.DefaultOptions)}, nil
	case fedavg.MethodFedAvg, fedavg.MethodFedAvgFT:
		if b.avg == nil {
			avg, ft := FedAvgPair(orDefault(s.FedAvg, fedavg.DefaultOptions))
			b.avg, b.avgFT = &avg, &ft
		}
		if name == fedavg.MethodFedAvgFT {
			return *b.avgFT, nil
		}
		return *b.avg, nil
	case fedavg.MethodFedProx:
		return FedAvg{Options: orDefault(s.FedProx, fedavg.FedProxOptions)}, nil
	case fedvi.MethodFedVI:
		return FedVI{Options: orDefault(s.FedVI, fedvi.DefaultOptions)}, nil
	case MethodFedVIFedAvg, MethodFedVIFedAvgFT:
		if b.viAvg == nil {
			avg, ft := FedVIFedAvgPair(s.fedVIFedAvg(), orDefault(s.FedVIFineTune, fedvi.DefaultFineTune))
			b.viAvg, b.viAvgFT = &avg, &ft
		}
		if name == MethodFedVIFedAvgFT {
			return *b.viAvgFT, nil
		}
		return *b.viAvg, nil
	default: // GenFL: the registry has no other classification method
		g := DefaultGenFL()
		if s.GenFL != nil {
			g.Options = *s.GenFL
		}
		return g, nil
	}
}

// orDefault is *p, or def() for nil.
// fedVIFedAvg are the options of FedAvg on FedVI's network: FedVIFedAvg,
// else FedVI, else fedvi.DefaultOptions.
func (s *Settings) fedVIFedAvg() fedvi.Options {
	return orDefault(s.FedVIFedAvg, func() fedvi.Options { return orDefault(s.FedVI, fedvi.DefaultOptions) })
}

// Label is method m's table label with s's settings: the registry's Label,
// except that the FedAvg rows on FedVI's network name FedVI's own E when
// their network has no ReLU after its dense 128 (the registry's label
// names Reddi et al.'s CNN, which has one).
func (s *Settings) Label(m string) string {
	if (m == MethodFedVIFedAvg || m == MethodFedVIFedAvgFT) && !s.fedVIFedAvg().Arch.EmbedReLU {
		if m == MethodFedVIFedAvg {
			return "FedAvg (FedVI's E, no ReLU after dense 128)"
		}
		return "FedAvg+FT (FedVI's E, no ReLU after dense 128)"
	}
	return Label(m)
}

func orDefault[T any](p *T, def func() T) T {
	if p != nil {
		return *p
	}
	return def()
}
