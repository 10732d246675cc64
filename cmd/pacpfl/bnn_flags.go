package main

import (
	"cmp"
	"flag"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// Models and data sets of train and experiment.
const (
	modelGP       = "gp"
	modelBNN      = "bnn"
	dataPoly      = "polynomial"
	dataPV        = "pv"
	dataFMNIST    = "fmnist"
	partLabels5   = data.PartitionLabels5
	partDirichlet = data.PartitionDirichlet
)

// bnnFlags are the flags of the BNN client model and its data (train,
// experiment fmnist, server, client), bound to the library's options in
// groups; trainFlags holds the shared ones.
type bnnFlags struct {
	model, data string
	net         lml.BNN                 // --arch, --hidden (0: the architecture's)
	samples     int                     // --samples: L of (38) in training
	post        lml.BNNPosteriorOptions // the personalisation
	o           fl.BNNOptions           // σ_μ, σ_ω and the bounds' p-min and weight draws
	boundLoss   string                  // --bound-loss, parsed by loss
	partition   string
	dataDir     string
	split       string               // --split of labels5
	dir         data.DirichletConfig // --alpha, --max-images, --pixels (Clients, New: trainFlags')
	set         map[string]bool      // flags given on the command line
	// noPACPFL: experiment fmnist runs no PAC-PFL, so no method reads the
	// server's clients per round.
	noPACPFL bool
}

// newBNNFlags returns the flags with the library's defaults: those a
// command does not register keep them.
func newBNNFlags() bnnFlags {
	post := lml.DefaultBNNPosteriorOptions()
	post.Batch = 0 // min(m, 64): follows each client's m
	return bnnFlags{model: modelGP, net: lml.BNN{Arch: lml.ArchMLP}, samples: lml.DefaultBNNSamples, post: post,
		o: fl.DefaultBNNOptions(), boundLoss: "ce", partition: partLabels5, split: "small",
		dir: data.DirichletConfig{Alpha: data.DefaultDirichletAlpha, Pixels: data.PixelsUnit}}
}

// registerAll registers every group (train, server and client on
// synthetic data).
func (b *bnnFlags) registerAll(fs *flag.FlagSet) {
	b.registerChoice(fs)
	b.registerFMNIST(fs)
	b.registerNet(fs)
	b.registerBounds(fs)
}

// The BNN's default numbers of existing (--partition dirichlet) and new
// clients.
const bnnClients, bnnNewClients = 10, 2

// bnnOnly and gpOnly are the flags that belong to one client model.
var (
	bnnOnly = []string{"partition", "split", "alpha", "data-dir", "arch", "hidden", "samples", "posterior-particles",
		"posterior-steps", "posterior-lr", "alpha-samples", "sigma-mu", "sigma-omega", "bound-loss", "p-min",
		"weight-draws", "max-images", "pixels"}
	gpOnly = []string{"extra", "func-samples", "loss-range", "sigma-p", "pfedgp-mean", "baseline-steps"}
)

// registerChoice registers the client model, its data set and the BNN's
// network (a CSV file's task decides them, so train --data FILE.csv does
// not register them).
func (b *bnnFlags) registerChoice(fs *flag.FlagSet) {
	fs.StringVar(&b.model, "model", b.model,
		"client model: gp (regression, Polynomial) or bnn (classification, Fashion-MNIST)")
	fs.StringVar(&b.data, "data", b.data, "data set: polynomial (GP), pv (GP; pacpfl train --data pv -h lists its "+
		"flags), fmnist (BNN) or a CSV file of your own (pacpfl train --data FILE.csv -h lists its flags); the "+
		"default follows --model")
	fs.StringVar(&b.net.Arch, "arch", b.net.Arch, "bnn: network: mlp (784-H-10) or bcnn (the paper's CNN, dense H)")
}

// registerFMNIST registers the federated split of Fashion-MNIST;
// --clients and --new-clients (trainFlags', registered before) size the
// BNN's split too, with other defaults (bnnDefaults).
func (b *bnnFlags) registerFMNIST(fs *flag.FlagSet) {
	if f := fs.Lookup("clients"); f != nil {
		f.Usage = fmt.Sprintf("existing clients n: gp, of the Polynomial data set (the default below); bnn, of "+
			"--partition dirichlet (default %d; labels5 has one per label)", bnnClients)
	}
	if f := fs.Lookup("new-clients"); f != nil {
		f.Usage = fmt.Sprintf("new clients: gp, of the Polynomial data set (the default below); bnn, held out of "+
			"either Fashion-MNIST partition (default %d)", bnnNewClients)
	}
	d := &b.dir
	fs.StringVar(&b.partition, "partition", b.partition,
		"bnn: federated split of Fashion-MNIST: labels5 (pFedBayes) or dirichlet")
	fs.StringVar(&b.split, "split", b.split,
		"bnn, labels5: small, medium or large (50/200/900 training and 950/800/300 test images per label per client)")
	fs.Float64Var(&d.Alpha, "alpha", d.Alpha, "bnn, dirichlet: concentration α of the label proportions")
	fs.StringVar(&b.dataDir, "data-dir", "", "bnn: directory of the Fashion-MNIST IDX files (default "+
		"$"+data.DataDirEnv+", then "+data.FashionMNISTDebianDir+")")
	fs.IntVar(&d.MaxImages, "max-images", d.MaxImages, "bnn: use at most this many images (0: the split's full sizes)")
	fs.StringVar((*string)(&d.Pixels), "pixels", string(d.Pixels),
		"bnn: pixel scale: unit (p/255 in [0, 1]) or symmetric (2p/255 − 1 in [−1, 1], the pFedBayes authors' data)")
}

// registerNet registers the BNN's network, prior, training and
// personalisation.
func (b *bnnFlags) registerNet(fs *flag.FlagSet) {
	p := &b.post
	fs.IntVar(&b.net.Hidden, "hidden", b.net.Hidden, "bnn: hidden width (0: 100 for mlp, 512 for bcnn)")
	fs.IntVar(&b.samples, "samples", b.samples, "bnn: weight samples L of the LML estimate (38) in training")
	fs.Float64Var(&b.o.SigmaMu, "sigma-mu", b.o.SigmaMu,
		"bnn: hyper-prior std of the prior means, in units of the He std √(2/fan-in)")
	fs.Float64Var(&b.o.SigmaOmega, "sigma-omega", b.o.SigmaOmega, "bnn: hyper-prior std of the prior log-variances ω")
	fs.IntVar(&p.Particles, "posterior-particles", p.Particles,
		"bnn: SVGD weight particles M per prior in personalisation")
	fs.IntVar(&p.Steps, "posterior-steps", p.Steps,
		"bnn: SVGD steps of the personalisation (and of Vanilla and Pooled)")
	fs.Float64Var(&p.LR, "posterior-lr", p.LR, "bnn: Adam learning rate of the personalisation SVGD")
	fs.IntVar(&p.AlphaSamples, "alpha-samples", p.AlphaSamples,
		"bnn: weight samples of the estimate (38) behind the mixture weights α_κ")
}

// registerBounds registers the BNN's bounds (experiment fmnist computes
// none).
func (b *bnnFlags) registerBounds(fs *flag.FlagSet) {
	o := &b.o.Bounds
	fs.StringVar(&b.boundLoss, "bound-loss", b.boundLoss,
		"bnn: bounded loss of the bounds: ce (cross-entropy clipped to [0, ln(1/p-min)]) or 01")
	fs.Float64Var(&o.Loss.PMin, "p-min", o.Loss.PMin, "bnn: probability floor of the clipped cross-entropy")
	fs.IntVar(&o.WeightDraws, "weight-draws", o.WeightDraws, "bnn: weight draws per ln Z^C of the bounds")
}

// resolve records the flags given, settles the model and the data set and
// refuses flags of the other model.
func (b *bnnFlags) resolve(fs *flag.FlagSet) error {
	b.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { b.set[f.Name] = true })
	switch {
	case b.data == dataFMNIST && !b.set["model"]:
		b.model = modelBNN
	case b.data == "" && b.model == modelBNN:
		b.data = dataFMNIST
	case b.data == "":
		b.data = dataPoly
	}
	switch {
	case b.model != modelGP && b.model != modelBNN:
		return usagef("unknown --model %q (want gp or bnn)", b.model)
	case b.data != dataPoly && b.data != dataFMNIST && b.data != dataPV:
		return usagef("unknown --data %q (want polynomial, pv or fmnist)", b.data)
	case b.model == modelGP && b.data == dataFMNIST:
		return usagef("--model gp runs on --data polynomial or pv (fmnist is for --model bnn)")
	case b.model == modelBNN && b.data != dataFMNIST:
		return usagef("--model bnn runs on --data fmnist (polynomial and pv are for --model gp)")
	}
	other := bnnOnly
	if b.model == modelBNN {
		other = gpOnly
	}
	for _, name := range other {
		if b.set[name] && !(name == "samples" && b.data == dataPV) { // PV's --samples: per house
			return usagef("--%s does not apply to --model %s", name, b.model)
		}
	}
	return nil
}

// bnnDefaults replaces the GP defaults of the shared flags that were not
// given by those of the BNN model (docs/math.md, "BNN defaults").
func (b *bnnFlags) bnnDefaults(f *trainFlags) {
	o := fl.DefaultBNNOptions()
	b.byDefault("k", func() { f.o.Server.K = o.Server.K })
	b.byDefault("rounds", func() { f.o.Server.Rounds = o.Server.Rounds })
	b.byDefault("clients-per-round", func() { f.o.Server.ClientsPerRound = o.Server.ClientsPerRound })
	b.byDefault("batch", func() { f.o.Server.Batch = o.Server.Batch })
	b.byDefault("lr", func() { f.o.Server.LR = o.Server.LR })
	b.byDefault("tau", func() { f.o.Server.Tau = o.Server.Tau })
	b.byDefault("bound-samples", func() { f.o.Bounds.PriorSamples = o.Bounds.PriorSamples })
	b.byDefault("clients", func() { f.poly.Existing = bnnClients })
	b.byDefault("new-clients", func() { f.poly.New = bnnNewClients })
}

// byDefault calls set unless the flag name (or its short form) was given.
func (b *bnnFlags) byDefault(name string, set func()) {
	if !b.set[name] && !(name == "rounds" && b.set["T"]) && !(name == "clients-per-round" && b.set["c"]) {
		set()
	}
}

// check validates the BNN flags (before any data is read).
func (b *bnnFlags) check(f *trainFlags) error {
	if err := b.checkSplit(f); err != nil {
		return err
	}
	// The server flags, against a stand-in for the n existing clients the
	// split will have (labels5: one per class of Fashion-MNIST's 10);
	// options re-checks them on the real split.
	n := b.imageSplit(f).Existing(10)
	if b.noPACPFL {
		// No method samples clients with --clients-per-round: its default
		// must not refuse a split of fewer clients (its values are still
		// checked).
		n = max(n, f.o.Server.ClientsPerRound)
	}
	s, err := f.serverConfig(&data.Dataset{Existing: make([]data.ClientData, n)}, 0)
	if err != nil {
		return err
	}
	if tau := (fl.BNNOptions{Server: s}).BoundTau(n); f.o.Bounds.PriorSamples > 0 && !(tau < 1) {
		return usagef("the bounds need τ < 1, got %v (or pass --bound-samples 0 to skip the bounds)", tau)
	}
	m := b.bnnModel()
	if err := m.Validate(); err != nil {
		return usageError{err}
	}
	if err := b.checkNet(); err != nil {
		return err
	}
	images := cmp.Or(b.dir.MaxImages, 70000) // at most the 70,000 of the set
	what := fmt.Sprintf("--arch %s --hidden %d --k %d --samples %d", b.net.Arch, b.net.Hidden, f.o.Server.K, b.samples)
	return memoryError(what, m.TrainingBytes(images, f.o.Server.K, f.o.Server.ClientsPerRound))
}

// bnnFlagOf names the flags of the fields of data.ImageSplit and
// fl.BNNOptions.
var bnnFlagOf = map[string]string{"Partition": "partition", "Split": "split", "Dirichlet.Alpha": "alpha",
	"Dirichlet.Clients": "clients", "Dirichlet.New": "new-clients", "Dirichlet.MaxImages": "max-images",
	"Dirichlet.Pixels": "pixels", "SigmaMu": "sigma-mu", "SigmaOmega": "sigma-omega",
	"Bounds.WeightDraws": "weight-draws", "Bounds.Loss": "bound-loss", "Bounds.Loss.PMin": "p-min"}

// bnnFieldUsage is fieldUsage with the flags of bnnFlagOf.
func bnnFieldUsage(err error) error {
	return fieldUsage(err, func(field string) string { return bnnFlagOf[field] })
}

// checkSplit refuses the flags of the other partition and validates the
// split (the clients' numbers were checked with the training flags).
func (b *bnnFlags) checkSplit(f *trainFlags) error {
	switch {
	case b.partition == partLabels5 && (b.set["alpha"] || b.set["clients"]):
		return usagef("--alpha and --clients are for --partition dirichlet (labels5 has one client per label)")
	case b.partition == partDirichlet && b.set["split"]:
		return usagef("--split is for --partition labels5")
	}
	if err := b.imageSplit(f).Validate(); err != nil {
		return bnnFieldUsage(err)
	}
	if b.dir.Pixels == "" { // the library's unit scale, but not a value of --pixels
		return usagef("--pixels \"\": want unit or symmetric")
	}
	return nil
}

// checkNet validates the flags of the weight samples and the
// personalisation, which take no 0 for their defaults, and those of the
// hyper-prior and the bounds.
func (g *bnnFlags) checkNet() error {
	switch {
	case g.samples < 1:
		return usagef("--samples %d must be at least 1", g.samples)
	case g.post.Particles < 1 || g.post.Steps < 0 || g.post.AlphaSamples < 1:
		return usagef("--posterior-particles and --alpha-samples must be ≥ 1, --posterior-steps ≥ 0")
	}
	if err := g.o.CheckRanges(); err != nil {
		return bnnFieldUsage(err)
	}
	_, err := g.loss()
	return err
}

// bnnModel is the client model of the flags.
func (b *bnnFlags) bnnModel() *fl.BNNModel {
	m := fl.NewBNNModel(b.net)
	m.Samples, m.Posterior = b.samples, b.post
	return m
}

// loss is the bounded loss of the bounds.
func (g *bnnFlags) loss() (lml.Loss, error) {
	l, err := fl.ParseBoundLoss(g.boundLoss, g.o.Bounds.Loss.PMin)
	return l, bnnFieldUsage(err)
}

// images loads Fashion-MNIST; missing files are an environment problem
// (exit 2) whose message names the package and flag that provide them.
func (b *bnnFlags) images() (*data.Images, error) {
	im, err := data.FashionMNIST(b.dataDir)
	return im, asUsage(err)
}

// imageSplit is the federated split of the flags (the clients' numbers:
// f's).
func (b *bnnFlags) imageSplit(f *trainFlags) data.ImageSplit {
	d := b.dir
	d.Clients, d.New = f.poly.Existing, f.poly.New
	return data.ImageSplit{Partition: b.partition, Split: b.split, Dirichlet: d}
}

// dataset splits the images for one seed.
func (b *bnnFlags) dataset(im *data.Images, f *trainFlags, seed uint64) (*data.Dataset, error) {
	ds, err := b.imageSplit(f).Dataset(im, seed)
	return ds, asUsage(err)
}

// client builds only existing client i of the split dataset makes (a
// client process's own data).
func (b *bnnFlags) client(im *data.Images, f *trainFlags, seed uint64, i int) (*data.ClientData, error) {
	c, err := b.imageSplit(f).Client(im, seed, i)
	if err != nil {
		return nil, usagef("--client %d: %v", i, err)
	}
	return c, nil
}

// options are the PAC-PFL options of the flags for ds.
func (b *bnnFlags) options(f *trainFlags, ds *data.Dataset, seed uint64) (o fl.BNNOptions, err error) {
	o = b.o
	if o.Server, err = f.serverConfig(ds, seed); err != nil {
		return o, err
	}
	if o.Bounds.Loss, err = b.loss(); err != nil {
		return o, err
	}
	o.Bounds.Delta, o.Bounds.PriorSamples, o.Bounds.Seed = f.o.Bounds.Delta, f.o.Bounds.PriorSamples, seed
	// Check the bound assumptions now rather than after training.
	if err := o.CheckBounds(ds); err != nil {
		return o, usagef("%v (or pass --bound-samples 0 to skip the bounds)", err)
	}
	return o, nil
}

// describe names the data set of the flags, e.g. "fmnist labels5 small".
func (b *bnnFlags) describe(f *trainFlags) string { return "fmnist " + b.imageSplit(f).String() }
