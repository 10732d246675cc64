package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/runlog"
)

// bnnMethods are the methods of pacpfl experiment fmnist, in table order.
var bnnMethods = []string{fl.MethodPACPFL, fl.MethodVanilla, fl.MethodPooled}

func fmnistUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl experiment fmnist [--partition labels5 --split small|medium|large | --partition "+
		"dirichlet --alpha 0.4 --clients N] [--methods "+
		"pacpfl,vanilla,pooled,pfedbayes,fedavg,fedprox,fedavg-ft,genfl,fedvi,fedvi-fedavg,fedvi-fedavg-ft] [--seeds "+
		"5] [--seed-base N] [--json FILE] [train flags] [--fed-*, --pfedbayes-*, --fedavg-*, --fedvi-* flags]")
}

// fmnistClientFlags makes the help of --clients, --new-clients and
// --max-images that of experiment fmnist, whose data is always
// Fashion-MNIST (bnnDefaults and dirichletDefaults set the values).
func fmnistClientFlags(fs *flag.FlagSet) {
	c, n, im := fs.Lookup("clients"), fs.Lookup("new-clients"), fs.Lookup("max-images")
	c.Usage = "existing (participating) clients n of --partition dirichlet (labels5 has one client per label)"
	c.DefValue = strconv.Itoa(papers.FedVIClients)
	// Two defaults, one per partition: both in the text, none after it.
	n.Usage = fmt.Sprintf("held-out new (non-participating) clients, never seen in training (default %d for labels5, "+
		"%d for dirichlet)", bnnNewClients, papers.FedVINewClients)
	n.DefValue = "0"
	im.Usage = fmt.Sprintf("use at most this many images (default 0 for labels5: the split's full sizes; %d for "+
		"dirichlet, drawn at random from the 70,000)", papers.FedVIImages)
	im.DefValue = "0"
}

// dirichletDefaults sets experiment fmnist's split of --partition
// dirichlet where the flags were not given (after bnnDefaults): FedVI's
// (papers.FedVIClients), one seed of fedvi and fedvi-fedavg in about 23
// minutes of two idle cores.
func (b *bnnFlags) dirichletDefaults(f *trainFlags) {
	if b.partition == partDirichlet {
		b.byDefault("clients", func() { f.poly.Existing = papers.FedVIClients })
		b.byDefault("new-clients", func() { f.poly.New = papers.FedVINewClients })
		b.byDefault("max-images", func() { b.dir.MaxImages = papers.FedVIImages })
	}
}

// methodFlags are the flags of a family of experiment fmnist's methods.
// Each family has a flag file of its own whose init appends its maker to
// fmnistMethodFlags: with its adapter in package methods, that file is all
// a new method of the experiment needs.
type methodFlags interface {
	// add registers the flags.
	add(fs *flag.FlagSet)
	// check validates them for x's --methods, before any data is read.
	check(x *fmnistExperiment) error
	// settings puts the options of the family's methods among x's, with
	// the random streams of the first seed seed0, into s.
	settings(s *methods.Settings, x *fmnistExperiment, seed0 uint64)
	// note writes the family's settings after the results table, or
	// nothing.
	note(w io.Writer, x *fmnistExperiment)
}

// fmnistMethodFlags make the methodFlags of experiment fmnist, in the
// order of their checks (the flag files' init order: by file name).
var fmnistMethodFlags []func() methodFlags

// has reports whether any of ms is among x's methods.
func (x *fmnistExperiment) has(ms ...string) bool {
	return slices.ContainsFunc(ms, func(m string) bool { return slices.Contains(x.methods, m) })
}

// fmnistExperiment is experiment fmnist's parsed flags.
type fmnistExperiment struct {
	f        trainFlags
	bf       bnnFlags
	mf       []methodFlags
	seeds    int
	seedBase uint64
	methods  stringList
	quiet    bool
	jsonPath string
	set      methods.Settings // the methods' settings (newMethods)
	// wrap, if set, replaces the methods before they run (pacpfl server
	// --method: served to client processes).
	wrap func([]harness.Method) ([]harness.Method, error)
}

// parseFMNIST parses and checks the flags of experiment fmnist; ok=false:
// exit with status.
func parseFMNIST(args []string, stderr io.Writer) (x *fmnistExperiment, status int, ok bool) {
	x = newFMNIST()
	fs := newFlagSet("experiment fmnist", stderr)
	x.register(fs, false)
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, st, false
	}
	if err := x.check(fs); err != nil {
		return nil, fail(stderr, "experiment", err), false
	}
	return x, exitOK, true
}

func newFMNIST() *fmnistExperiment {
	return &fmnistExperiment{f: newTrainFlags(), bf: newBNNFlags(), methods: stringList(slices.Clone(bnnMethods)),
		seeds: 1, seedBase: 1}
}

// register registers the flags of experiment fmnist; peer: those of one
// method's run across machines (pacpfl server/client --method: one seed,
// --seed; --method, --quiet and --json are the caller's).
func (x *fmnistExperiment) register(fs *flag.FlagSet, peer bool) {
	// The comparison computes no bounds, and its seeds are --seeds and
	// --seed-base: it registers neither the bounds' flags nor --seed. A
	// peer method's run has no PAC-PFL server to configure.
	if !peer {
		x.f.registerSVGD(fs)
		x.f.registerTemp(fs)
		x.f.registerDP(fs)
	}
	x.f.registerData(fs)
	x.bf.registerChoice(fs)
	x.bf.registerFMNIST(fs)
	x.bf.registerNet(fs)
	fmnistClientFlags(fs)
	if peer {
		fs.Uint64Var(&x.seedBase, "seed", 1, "the run's seed (the same for the server and every client)")
	} else {
		fs.IntVar(&x.seeds, "seeds", 5, "number of seeds")
		fs.Uint64Var(&x.seedBase, "seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
		fs.Var(&x.methods, "methods", "comma-separated methods to run: pacpfl, vanilla, pooled; also genfl (GenFL's "+
			"PFL; existing clients only), fedvi, fedvi-fedavg and fedvi-fedavg-ft (FedAvg and FedAvg with local "+
			"fine-tuning on FedVI's CNN, with a ReLU after its dense 128); pfedbayes, fedavg, fedprox and fedavg-ft "+
			"(its baselines on the same MLP)")
	}
	for _, mk := range fmnistMethodFlags {
		x.mf = append(x.mf, mk())
		x.mf[len(x.mf)-1].add(fs)
	}
	if !peer {
		fs.BoolVar(&x.quiet, "quiet", false, "no progress output")
		fs.StringVar(&x.jsonPath, "json", "", "also write the results as JSON to `FILE`")
	}
}

// check validates the flags before any data are read and sets the
// defaults that depend on them.
func (x *fmnistExperiment) check(fs *flag.FlagSet) error {
	f, bf := &x.f, &x.bf
	if flagSet(fs, "data") || flagSet(fs, "model") {
		return usagef("--model and --data do not apply to experiment fmnist (BNN clients on Fashion-MNIST)")
	}
	bf.data = dataFMNIST
	if err := bf.resolve(fs); err != nil {
		return err
	}
	if err := f.afterParse(fs, x.jsonPath); err != nil {
		return err
	}
	if err := checkSeeds(x.seeds, x.seedBase); err != nil {
		return err
	}
	// A repeated method would pool its runs as if they were more seeds and
	// print a confidence interval that is too narrow.
	if err := checkNames("--methods", x.methods, methods.Names(methods.Classification)); err != nil {
		return err
	}
	for _, m := range x.mf {
		if err := m.check(x); err != nil {
			return err
		}
	}
	bf.bnnDefaults(f)
	bf.dirichletDefaults(f)
	bf.noPACPFL = !slices.Contains(x.methods, fl.MethodPACPFL)
	if err := bf.check(f); err != nil {
		return err
	}
	// Bounds are not part of the comparison.
	x.f.o.Bounds.PriorSamples = 0
	return nil
}

// runExperimentFMNIST is pacpfl experiment fmnist: PAC-PFL, Vanilla and
// Pooled with BNN clients, and the peer methods (GenFL, FedVI, pFedBayes
// and their baselines), on the same splits over several seeds.
func runExperimentFMNIST(args []string, stdout, stderr io.Writer) int {
	x, st, ok := parseFMNIST(args, stderr)
	if !ok {
		return st
	}
	return x.run("experiment", stdout, stderr)
}

// run runs the experiment and writes its report, failing as cmd.
func (x *fmnistExperiment) run(cmd string, stdout, stderr io.Writer) int {
	f, bf := &x.f, &x.bf
	start := time.Now()
	im, err := bf.images()
	if err != nil {
		return fail(stderr, cmd, err)
	}
	// The first seed's data set checks every method's options before any
	// work, and is the data of that seed.
	ds0, err := bf.dataset(im, f, x.seedBase)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	hms, err := x.newMethods(ds0)
	if err == nil && x.wrap != nil {
		hms, err = x.wrap(hms)
	}
	if err != nil {
		return fail(stderr, cmd, err)
	}
	exp := harness.Experiment{Methods: hms, Seeds: harness.Seeds(x.seeds, x.seedBase),
		Data: func(seed uint64) (*data.Dataset, error) {
			if seed == x.seedBase {
				return ds0, nil
			}
			return bf.dataset(im, f, seed)
		}}
	acc := report.NewClassRuns(x.seeds, bf.partition == partDirichlet)
	obs := &runlog.Classification{W: stderr, Quiet: x.quiet, NewBar: cliprogress.Maker(stderr, x.quiet),
		OnDone: acc.Observe}
	ctx, stop := signalContext()
	defer stop()
	hr, err := harness.Run(ctx, exp, obs)
	if err == nil {
		err = acc.Err()
	}
	if errors.As(err, new(*rpc.Interrupted)) {
		return exitError // rpc logged where to resume from
	}
	if err != nil {
		return fail(stderr, cmd, libError(err))
	}
	rep := report.NewFMNIST(bf.imageSplit(f), hr.Seeds, acc.Methods(x.methods))
	return emitReport(cmd, x.jsonPath, rep, func(w io.Writer) {
		rep.WriteText(w, x.methods, x.set.Label)
		for _, m := range x.mf {
			m.note(w, x)
		}
		rep.WriteFooter(w, time.Since(start).Seconds())
	}, stdout, stderr)
}
