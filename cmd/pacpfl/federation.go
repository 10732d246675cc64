package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc"
)

// pacpfl server / client / certs: the federation of pacpfl train across
// processes and machines over gRPC (package rpc). The server runs the same
// fl.Server loop as train; its clients are proxies of the client processes,
// which run the same client update on their own data.

func init() {
	register(&command{name: "server", summary: "run the PAC-PFL server for remote clients over gRPC (TLS, tokens); the same report as train", run: runServer})
	register(&command{name: "client", summary: "run one PAC-PFL client on its own data against a pacpfl server", run: runClient})
	register(&command{name: "certs", summary: "write a test CA, a server certificate and client tokens for pacpfl server/client", run: runCerts})
}

// serverFlags are pacpfl server's flags beyond the training's.
type serverFlags struct {
	fo                     rpc.FederateOptions // Listen, Wait, SaveEvery, Server's limits
	auth                   rpc.ServerAuth
	robust                 fl.Robust
	ckptDir, jsonPath      string
	resume, quiet          bool
	quorum                 int
	normFactor, maxUpdNorm float64
}

func (s *serverFlags) add(fs *flag.FlagSet) {
	sc := &s.fo.Server
	fs.StringVar(&s.fo.Listen, "listen", "", "`host:port` to listen on (required)")
	fs.StringVar(&s.auth.CertFile, "tls-cert", "", "server certificate `FILE` (PEM; pacpfl certs writes one)")
	fs.StringVar(&s.auth.KeyFile, "tls-key", "", "server key `FILE` (PEM)")
	fs.StringVar(&s.auth.TokenDir, "tokens", "", "`DIR` with client-I.token for I = 0..n-1 (pacpfl certs); required unless --insecure or --client-ca")
	fs.StringVar(&s.auth.ClientCA, "client-ca", "", "mutual TLS: require client certificates signed by this CA `FILE`; a client may register only as the id its certificate names")
	fs.BoolVar(&s.auth.Insecure, "insecure", false, "plaintext, for loopback addresses only")
	fs.DurationVar(&sc.RoundTimeout, "round-timeout", rpc.DefaultRoundTimeout, "deadline of a client update; a client that misses it is dropped from the round and its session cut (0: no deadline: wait for the client, also across reconnections)")
	fs.IntVar(&sc.Limits.MaxUnauth, "max-unregistered", rpc.DefaultMaxUnauth, "most connections that have not registered, in all; further ones are closed on arrival (each may send 64 KiB and has 10 s to register)")
	fs.IntVar(&sc.Limits.MaxUnauthPerHost, "max-unregistered-per-host", rpc.DefaultMaxUnauthPerHost, "most connections that have not registered from one IP address")
	fs.DurationVar(&s.fo.Wait, "wait", 0, "give up when not every client has joined after this long (0: wait for ever)")
	fs.Int64Var(&sc.MaxPayload, "max-payload", rpc.DefaultMaxPayload, "largest payload (particles or gradient) in `bytes`")
	fs.IntVar(&s.quorum, "quorum", 0, "a round completes when at least this many selected clients contributed; failed, late or rejected updates are dropped and logged (0: every selected client must answer)")
	fs.Float64Var(&s.normFactor, "max-norm-factor", 0, "with --quorum: reject an update whose norm exceeds this multiple of the median norm of the round's other accepted updates (judged with 2 or more others; 0: off)")
	fs.Float64Var(&s.maxUpdNorm, "max-update-norm", 0, "reject an update whose L2 norm (all k particles) exceeds this bound, whatever the other clients send, one client per round included (0: off); with --quorum the update is left out, without it the run ends")
	fs.StringVar((*string)(&s.robust.Rule), "aggregator", "mean", "how a round's accepted updates combine: mean, median (coordinate-wise; breakdown point ⌊(u−1)/2⌋/u), trimmed-mean (--trim), krum or multi-krum (--byzantine, --krum-select); docs/math.md")
	fs.Float64Var(&s.robust.Trim, "trim", 0, "trimmed-mean: fraction β in (0, 1/2) of the updates dropped at each end of every coordinate")
	fs.IntVar(&s.robust.Byzantine, "byzantine", 0, "krum, multi-krum: the number f of hostile updates tolerated (needs 2f+3 updates per round)")
	fs.IntVar(&s.robust.Select, "krum-select", 0, "multi-krum: updates averaged (0: u − f)")
	fs.StringVar(&s.ckptDir, "checkpoint", "", "`DIR` for the server's checkpoint (server.ckpt; written atomically, mode 0600)")
	fs.IntVar(&s.fo.SaveEvery, "checkpoint-every", 10, "write the checkpoint every this many rounds (and on SIGTERM/SIGINT)")
	fs.BoolVar(&s.resume, "resume", false, "continue from the checkpoint in --checkpoint (refused if it is from another configuration)")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress output (joins and refusals are still logged)")
	fs.StringVar(&s.jsonPath, "json", "", "also write the results as JSON to `FILE`")
}

// check refuses unusable server flags, and makes the checkpoint directory.
func (s *serverFlags) check() error {
	fo, sc := &s.fo, &s.fo.Server
	switch {
	case fo.Listen == "":
		return usagef("--listen host:port is required")
	case fo.Wait < 0 || sc.RoundTimeout < 0 || sc.MaxPayload < 1:
		return usagef("--wait, --round-timeout must be ≥ 0 and --max-payload ≥ 1")
	case sc.Limits.MaxUnauth < 1 || sc.Limits.MaxUnauthPerHost < 1:
		return usagef("--max-unregistered and --max-unregistered-per-host must be ≥ 1")
	case fo.SaveEvery < 1 || (s.resume && s.ckptDir == ""):
		return usagef("--checkpoint-every must be ≥ 1 and --resume needs --checkpoint DIR")
	case s.quorum < 0 || !(s.normFactor >= 0) || (s.normFactor > 0 && s.quorum == 0):
		return usagef("--quorum must be ≥ 0 and --max-norm-factor ≥ 0, and --max-norm-factor needs --quorum")
	}
	if sc.RoundTimeout == 0 {
		sc.RoundTimeout = -1 // the library's "no deadline"
	}
	if s.ckptDir != "" {
		if err := rpc.PrivateDir(s.ckptDir, !s.resume); err != nil {
			return usagef("--checkpoint %v", err)
		}
	}
	return nil
}

// serverRun is what a server mode (--model gp or bnn, --data FILE.csv)
// trains: the clients' data and model the coordinator checks, the training
// configuration, the run with the remote clients, and its report.
type serverRun struct {
	sc     rpc.ServerConfig
	cfg    *fl.Config
	ids    []string // --data FILE.csv: the existing clients' IDs
	run    func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error)
	report func(*fl.MethodResult) error
}

// setupServer builds the run of the flags' mode.
func setupServer(p *fedParse, jsonPath string, start time.Time, stdout, jsonOut, stderr io.Writer) (*serverRun, error) {
	f, bf, r := &p.f, &p.bf, &serverRun{}
	if p.csv {
		return r, r.setupCSV(p, jsonPath, start, stdout, jsonOut, stderr)
	}
	if bf.model == modelBNN {
		im, err := bf.images()
		if err != nil {
			return nil, err
		}
		ds, err := bf.dataset(im, f, f.seed)
		if err != nil {
			return nil, err
		}
		ob, err := bf.options(f, ds, f.seed)
		if err != nil {
			return nil, err
		}
		model := bf.bnnModel()
		r.sc, r.cfg = rpc.DatasetServer(ds), &ob.Server
		r.sc.ModelKind, r.sc.Dim = rpc.BNNKind(model), model.Dim()
		r.run = func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
			ob.Clients = func(*fl.BNNModel) ([]fl.Client, error) { return clients() }
			return fl.RunPACPFLBNN(ds, model, ob)
		}
		r.report = func(res *fl.MethodResult) error {
			return writeBNNReport(stdout, jsonOut, f, bf, model, ds, ob, res, start, jsonPath)
		}
		return r, nil
	}
	ds, err := f.dataset(f.seed)
	if err != nil {
		return nil, err
	}
	r.sc = rpc.DatasetServer(ds)
	o, err := r.gp(f, ds)
	if err != nil {
		return nil, err
	}
	g := fl.NewGPModel(ds.D)
	g.Inference = f.inference()
	r.run = func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		o.Clients = func(*fl.GPModel) ([]fl.Client, error) { return clients() }
		return fl.RunPACPFL(ds, g, *o, fl.MethodPACPFL)
	}
	r.report = func(res *fl.MethodResult) error {
		return writeTrainReport(stdout, jsonOut, f, ds, *o, res, start, jsonPath)
	}
	return r, nil
}

// gp sets the model of GP clients of ds and returns the training options.
func (r *serverRun) gp(f *trainFlags, ds *data.Dataset) (*fl.PACPFLOptions, error) {
	o, err := f.options(ds, f.seed)
	if err != nil {
		return nil, err
	}
	r.sc.ModelKind, r.sc.Dim, r.sc.Beta, r.cfg = rpc.GPKind(f.inference()), fl.NewGPModel(ds.D).Dim(), o.Beta.String(), &o.Server
	return &o, nil
}

// setupCSV builds the run of --data FILE.csv: the clients read their own
// rows of the file (rpc.CSVClient).
func (r *serverRun) setupCSV(p *fedParse, jsonPath string, start time.Time, stdout, jsonOut, stderr io.Writer) error {
	f, bf, c := &p.f, &p.bf, &p.c
	rec, fed, err := readUserData(c, f, stderr)
	if err != nil {
		return err
	}
	ds := fed.Dataset
	r.sc, r.ids = rpc.CSVServer(rec, fed), fed.ExistingIDs
	if data.Task(c.task) == data.Classification {
		bno, err := bf.options(f, ds, f.seed)
		if err != nil {
			return err
		}
		m, err := rpc.CSVBNNModel(bf.bnnModel(), ds.D, bf.hidden, ds.Classes)
		if err != nil {
			return err
		}
		r.sc.ModelKind, r.sc.Dim, r.cfg = rpc.CSVBNNKind(ds.D, bf.hidden, bf.samples), m.Dim(), &bno.Server
	} else if _, err := r.gp(f, ds); err != nil {
		return err
	}
	var ur *userRun
	r.run = func(clients func() ([]fl.Client, error)) (_ *fl.MethodResult, err error) {
		ur, err = trainUserFed(c, f, bf, fed, true, stderr, func(lc *fl.Config, _ []fl.Client) ([]fl.Client, error) {
			rpc.CopyServerSettings(lc, r.cfg) // the loop's own configuration with the server's settings
			return clients()
		})
		return nil, err
	}
	r.report = func(*fl.MethodResult) error {
		ur.seconds = time.Since(start).Seconds()
		return ur.write(c, f, stdout, jsonOut, jsonPath)
	}
	return nil
}

// fedParse holds the training flags a server or client shares with train.
type fedParse struct {
	f   trainFlags
	bf  bnnFlags
	c   csvFlags
	csv bool // --data FILE.csv: a client reads its own rows of the file
}

// flags registers the training flags, and with --data FILE.csv among args
// the CSV flags without those named in drop.
func (p *fedParse) flags(fs *flag.FlagSet, args []string, drop ...string) *flag.FlagSet {
	addTrainFlags(fs, &p.f)
	addGPInferenceFlags(fs, &p.f)
	addBNNFlags(fs, &p.bf)
	if p.csv = csvDataArg(args); p.csv {
		fs = dropFlags(fs, csvDropped...)
		p.c.add(fs)
		fs = dropFlags(fs, drop...)
	}
	return fs
}

// check checks the parsed training flags (jsonPath: --json).
func (p *fedParse) check(fs *flag.FlagSet, jsonPath string) error {
	if p.csv {
		if err := p.c.check(fs, &p.f, &p.bf); err != nil {
			return err
		}
		if p.c.save != "" {
			if err := checkOutput("--save", p.c.save); err != nil {
				return err
			}
		}
	} else if err := p.bf.resolve(fs); err != nil {
		return err
	}
	if err := p.f.afterParse(fs, jsonPath); err != nil {
		return err
	}
	if !p.csv && p.bf.model == modelBNN {
		p.bf.bnnDefaults(&p.f)
		return p.bf.check(&p.f)
	}
	return nil
}

func runServer(args []string, stdout, stderr io.Writer) int {
	stderr = rpc.SyncWriter(stderr) // the log lines come from the sessions' goroutines too
	fs, sf, p := newFlagSet("server", stderr), &serverFlags{}, &fedParse{}
	sf.add(fs)
	fs = p.flags(fs, args)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := p.check(fs, sf.jsonPath); err != nil {
		return fail(stderr, "server", err)
	}
	if err := sf.check(); err != nil {
		return fail(stderr, "server", err)
	}
	ck := rpc.Checkpoint{Dir: sf.ckptDir, ConfigHash: configHash(fs)}
	var err error
	if sf.resume {
		if sf.fo.Resume, err = ck.Load(); err != nil {
			return fail(stderr, "server", usagef("--resume: %v", err))
		}
	}
	if sf.fo.Creds, err = sf.auth.Credentials(sf.fo.Listen); err != nil {
		return fedFail(stderr, "server", err)
	}
	stdout, jsonOut := reportStreams(sf.jsonPath, stdout, stderr)
	r, err := setupServer(p, sf.jsonPath, time.Now(), stdout, jsonOut, stderr)
	if err != nil {
		return fedFail(stderr, "server", err)
	}
	logf := rpc.NewLog(stderr, "pacpfl server: ")
	if err := sf.options(r, ck, p.c.path, logf); err != nil {
		return fedFail(stderr, "server", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(stderr, "server", r.cfg.Rounds, sf.quiet)
	prog.hideLML = r.cfg.DP != nil
	r.cfg.Progress = prog.update
	res, err := rpc.Federate(ctx, sf.fo, r.run)
	prog.done()
	var intr *rpc.Interrupted
	var le *rpc.ListenError
	switch {
	case errors.As(err, &le):
		return fail(stderr, "server", usagef("--listen %s: %v", sf.fo.Listen, le.Err))
	case errors.As(err, &intr) && sf.ckptDir != "":
		logf("stopped after round %d: checkpoint in %s; continue with the same flags and --resume", intr.Round, sf.ckptDir)
		return exitError
	case errors.As(err, &intr):
		logf("stopped after round %d (no --checkpoint: the state is lost)", intr.Round)
		return exitError
	case err != nil:
		return fail(stderr, "server", err)
	}
	if err := r.report(res); err != nil {
		return fail(stderr, "server", err)
	}
	return exitOK
}

// options completes sf.fo for r: the update filters and the aggregation of
// the flags (checked before listening), the tokens, the checkpoint and the
// log.
func (sf *serverFlags) options(r *serverRun, ck rpc.Checkpoint, csvPath string, logf func(string, ...any)) error {
	cfg, n := r.cfg, r.sc.Clients
	cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm, cfg.Robust = sf.quorum, sf.normFactor, sf.maxUpdNorm, sf.robust
	if err := cfg.Validate(n); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "server: "))
	}
	toks, err := sf.auth.Tokens(n)
	if err != nil {
		return err
	}
	fo, sc := &sf.fo, r.sc
	sc.Tokens, sc.ClientCerts, sc.Log = toks, sf.auth.ClientCA != "", logf
	sc.MaxPayload, sc.RoundTimeout, sc.Limits = fo.Server.MaxPayload, fo.Server.RoundTimeout, fo.Server.Limits
	fo.Server, fo.Train = sc, cfg
	if sf.ckptDir != "" {
		fo.Save = ck.Save
	}
	fo.OnListen = func(net.Addr) {
		if r.ids != nil {
			ids := make([]string, len(r.ids))
			for i, id := range r.ids {
				ids[i] = fmt.Sprintf("%d = %q", i, id)
			}
			logf("client ids (--client) of %s: %s", csvPath, strings.Join(ids, ", "))
		}
		if fo.Resume != nil {
			logf("resuming from %s after round %d", ck.Path(), fo.Resume.Round)
		}
	}
	return nil
}

// serverOnlyFlags do not change the training result: they may differ
// between a run and its resumption. Every other flag is in the hash: the
// quorum, the round deadline and the update filters decide which updates
// enter a round.
var serverOnlyFlags = map[string]bool{
	"listen": true, "tls-cert": true, "tls-key": true, "tokens": true, "client-ca": true, "insecure": true,
	"wait": true, "max-payload": true, "quiet": true, "json": true, "checkpoint": true, "checkpoint-every": true,
	"resume": true, "save": true, "max-unregistered": true, "max-unregistered-per-host": true,
}

// configHash is the SHA-256 of every training flag's value (given or
// default), in name order: a checkpoint's configuration (rpc.Checkpoint).
func configHash(fs *flag.FlagSet) string {
	h := sha256.New()
	fs.VisitAll(func(f *flag.Flag) {
		if !serverOnlyFlags[f.Name] {
			fmt.Fprintf(h, "%s=%s\n", f.Name, f.Value.String())
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}

// fedFail is fail with rpc's ConfigErrors as usage errors (exit status 2).
func fedFail(stderr io.Writer, cmd string, err error) int {
	var ce *rpc.ConfigError
	if errors.As(err, &ce) {
		err = usageError{err}
	}
	return fail(stderr, cmd, err)
}

func runClient(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("client", stderr)
	var o rpc.ParticipateOptions
	a := &o.Auth
	fs.StringVar(&o.Server, "server", "", "server `host:port` (required)")
	fs.StringVar(&a.CAFile, "ca", "", "CA certificate `FILE` that signed the server's (PEM)")
	fs.StringVar(&a.TokenFile, "token-file", "", "this client's secret token `FILE` (mode 0600; required unless --insecure or a client certificate)")
	fs.StringVar(&a.CertFile, "tls-cert", "", "mutual TLS: this client's certificate `FILE` (PEM; pacpfl certs writes client-I.pem)")
	fs.StringVar(&a.KeyFile, "tls-key", "", "mutual TLS: this client's key `FILE` (PEM, mode 0600)")
	fs.BoolVar(&a.Insecure, "insecure", false, "plaintext, for loopback addresses only")
	id := fs.Int("client", -1, "this client's index I (0-based, required)")
	giveUp := fs.Duration("give-up", 10*time.Minute, "stop retrying after this long without a session (0: never)")
	maxClasses := fs.Int("max-classes", rpc.DefaultMaxClasses, "most class labels accepted from the server (--data FILE.csv --task classification: the network grows with them)")
	// The data and model flags of pacpfl train: give the server's (the
	// client regenerates the data set and keeps client --client; the server
	// refuses a client whose data or model differ). --data FILE.csv: this
	// client's own rows, with the server's column flags.
	var p fedParse
	fs = p.flags(fs, args, "new-clients", "save", "save-clients")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := p.check(fs, ""); err != nil {
		return fail(stderr, "client", err)
	}
	switch {
	case o.Server == "":
		return fail(stderr, "client", usagef("--server host:port is required"))
	case *id < 0 || (!p.csv && p.bf.model == modelGP && *id >= p.f.clients):
		return fail(stderr, "client", usagef("--client %d: want 0 ≤ I < --clients %d", *id, p.f.clients))
	case *giveUp < 0:
		return fail(stderr, "client", usagef("--give-up %v must be ≥ 0", *giveUp))
	case *maxClasses < 2:
		return fail(stderr, "client", usagef("--max-classes %d must be ≥ 2", *maxClasses))
	}
	var err error
	if o.Client, o.Source, err = p.client(*id, stderr); err != nil {
		return fedFail(stderr, "client", err)
	}
	o.Client.GiveUp, o.Client.MaxClasses, o.Client.Log = *giveUp, *maxClasses, rpc.NewLog(stderr, "pacpfl client: ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rpc.Participate(ctx, o); err != nil {
		return fedFail(stderr, "client", err)
	}
	return exitOK
}

// client is client id of the flags' mode, and the file of its data
// (--data FILE.csv).
func (p *fedParse) client(id int, stderr io.Writer) (rpc.ClientConfig, string, error) {
	f, bf := &p.f, &p.bf
	switch {
	case p.csv:
		cfg, err := rpc.CSVClient(rpc.CSVClientOptions{ID: id, Path: p.c.path, Spec: p.c.spec(), TestFraction: p.c.testFraction,
			Seed: f.seed, Inference: f.inference(), BNN: bf.bnnModel(), Hidden: bf.hidden, Notes: stderr})
		return cfg, p.c.path, err
	case bf.model == modelBNN:
		im, err := bf.images()
		if err != nil {
			return rpc.ClientConfig{}, "", err
		}
		cd, err := bf.client(im, f, f.seed, id) // only this client's split is built
		if err != nil {
			return rpc.ClientConfig{}, "", err
		}
		return rpc.BNNClient(id, cd, bf.bnnModel()), "", nil
	}
	f.newClients = 0 // only the existing clients' data (they are standardised together)
	ds, err := f.dataset(f.seed)
	if err != nil {
		return rpc.ClientConfig{}, "", err
	}
	return rpc.GPClient(id, &ds.Existing[id], ds.D, f.inference()), "", nil
}

func runCerts(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("certs", stderr)
	out := fs.String("out", "", "`DIR` to write ca.pem, server.pem, server.key, client-I.token, client-I.pem and client-I.key into (created 0700 if missing; required)")
	hosts := fs.String("hosts", "127.0.0.1,localhost", "comma-separated IP addresses and DNS names of the server")
	clients := fs.Int("clients", 0, "number of client tokens n (required)")
	days := fs.Int("days", 30, "validity of the certificates in days")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	switch {
	case *out == "":
		return fail(stderr, "certs", usagef("--out DIR is required"))
	case *clients < 1 || *clients > 100_000:
		return fail(stderr, "certs", usagef("--clients %d: want 1 to 100000", *clients))
	case *days < 1:
		return fail(stderr, "certs", usagef("--days %d must be ≥ 1", *days))
	}
	if err := rpc.PrivateDir(*out, true); err != nil {
		return fail(stderr, "certs", usagef("--out %v", err))
	}
	var hs []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hs = append(hs, h)
		}
	}
	c, err := rpc.GenerateCerts(hs, time.Duration(*days)*24*time.Hour, *clients)
	if err != nil {
		return fail(stderr, "certs", usagef("--hosts %q: %v", *hosts, err))
	}
	if err := c.WriteFiles(*out); err != nil {
		return fedFail(stderr, "certs", err)
	}
	fmt.Fprintf(stdout, "wrote %s: ca.pem, server.pem, server.key (hosts %s) and client-I.token, client-I.pem, client-I.key for I = 0 … %d (mode 0600)\n",
		*out, strings.Join(hs, ","), *clients-1)
	return exitOK
}
