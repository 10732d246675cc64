package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/rpc/fedtrain"
	"github.com/pacpfl/pacpfl/train"
)

// pacpfl server / client / certs: the federation of pacpfl train across
// processes and machines over gRPC (package rpc). The server runs the same
// fl.Server loop as train; its clients are proxies of the client processes,
// which run the same client update on their own data.

func init() {
	register(&command{name: "server", summary: "run the PAC-PFL server for remote clients over gRPC (TLS, tokens); " +
		"the same report as train", run: runServer})
	register(&command{name: "client", summary: "run one PAC-PFL client on its own data against a pacpfl server",
		run: runClient})
	register(&command{name: "certs",
		summary: "write a test CA, a server certificate and client tokens for pacpfl server/client", run: runCerts})
}

// serverFlags are pacpfl server's flags beyond the training's.
type serverFlags struct {
	st       rpc.ServerSettings
	jsonPath string
	quiet    bool
}

func (s *serverFlags) add(fs *flag.FlagSet) {
	st := &s.st
	fs.StringVar(&st.Listen, "listen", "", "`host:port` to listen on (required)")
	fs.StringVar(&st.Auth.CertFile, "tls-cert", "", "server certificate `FILE` (PEM; pacpfl certs writes one)")
	fs.StringVar(&st.Auth.KeyFile, "tls-key", "", "server key `FILE` (PEM)")
	fs.StringVar(&st.Auth.TokenDir, "tokens", "",
		"`DIR` with client-I.token for I = 0..n-1 (pacpfl certs); required unless --insecure or --client-ca")
	fs.StringVar(&st.Auth.ClientCA, "client-ca", "", "mutual TLS: require client certificates signed by this CA "+
		"`FILE`; a client may register only as the id its certificate names")
	fs.BoolVar(&st.Auth.Insecure, "insecure", false, "plaintext, for loopback addresses only")
	fs.DurationVar(&st.RoundTimeout, "round-timeout", rpc.DefaultRoundTimeout, "deadline of a client update; a "+
		"client that misses it is dropped from the round and its session cut (0: no deadline: wait for the client, "+
		"also across reconnections)")
	fs.IntVar(&st.Limits.MaxUnauth, "max-unregistered", rpc.DefaultMaxUnauth, "most connections that have not "+
		"registered, in all; further ones are closed on arrival (each may send 64 KiB and has 10 s to register)")
	fs.IntVar(&st.Limits.MaxUnauthPerHost, "max-unregistered-per-host", rpc.DefaultMaxUnauthPerHost,
		"most connections that have not registered from one IP address")
	fs.DurationVar(&st.Wait, "wait", 0, "give up when not every client has joined after this long (0: wait for ever)")
	fs.Int64Var(&st.MaxPayload, "max-payload", rpc.DefaultMaxPayload,
		"largest payload (particles or gradient) in `bytes`")
	fs.IntVar(&st.Quorum, "quorum", 0, "a round completes when at least this many selected clients contributed; "+
		"failed, late or rejected updates are dropped and logged (0: every selected client must answer)")
	fs.Float64Var(&st.MaxNormFactor, "max-norm-factor", 0, "with --quorum: reject an update whose norm exceeds this "+
		"multiple of the median norm of the round's other accepted updates (judged with 2 or more others; 0: off)")
	fs.Float64Var(&st.MaxUpdateNorm, "max-update-norm", 0, "reject an update whose L2 norm (all k particles) exceeds "+
		"this bound, whatever the other clients send, one client per round included (0: off); with --quorum the "+
		"update is left out, without it the run ends")
	fs.StringVar((*string)(&st.Robust.Rule), "aggregator", "mean", "how a round's accepted updates combine: mean, "+
		"median (coordinate-wise; breakdown point ⌊(u−1)/2⌋/u), trimmed-mean (--trim), krum or multi-krum "+
		"(--byzantine, --krum-select); docs/math.md")
	fs.Float64Var(&st.Robust.Trim, "trim", 0,
		"trimmed-mean: fraction β in (0, 1/2) of the updates dropped at each end of every coordinate")
	fs.IntVar(&st.Robust.Byzantine, "byzantine", 0,
		"krum, multi-krum: the number f of hostile updates tolerated (needs 2f+3 updates per round)")
	fs.IntVar(&st.Robust.Select, "krum-select", 0, "multi-krum: updates averaged (0: u − f)")
	fs.StringVar(&st.Checkpoint, "checkpoint", "",
		"`DIR` for the server's checkpoint (server.ckpt; written atomically, mode 0600)")
	fs.IntVar(&st.CheckpointEvery, "checkpoint-every", 10,
		"write the checkpoint every this many rounds (and on SIGTERM/SIGINT)")
	fs.BoolVar(&st.Resume, "resume", false,
		"continue from the checkpoint in --checkpoint (refused if it is from another configuration)")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress output (joins and refusals are still logged)")
	fs.StringVar(&s.jsonPath, "json", "", "also write the results as JSON to `FILE`")
}

// fedParse holds the training flags a server or client shares with train.
type fedParse struct {
	f   trainFlags
	bf  bnnFlags
	c   csvFlags
	csv bool // --data FILE.csv: a client reads its own rows of the file
	// pv is --data pv's --variant and --samples (nil: other data).
	pv *pvFlags
	// certify and explain are train's --certify and --explain.
	certify, explain bool
}

// flags registers the training flags, and with --data FILE.csv among args
// the CSV flags instead of the synthetic data's; server: also the CSV
// flags of the training run itself (the new clients, the model file).
func (p *fedParse) flags(fs *flag.FlagSet, args []string, server bool) {
	p.f, p.bf = newTrainFlags(), newBNNFlags()
	if p.csv = csvDataArg(args); p.csv {
		registerCSVRun(fs, &p.c, &p.f, &p.bf, server)
		return
	}
	if v, _ := cli.FlagValue(args, "data"); v == dataPV {
		// GP clients on PV, its server settings (methods.DefaultPACPFL)
		// the defaults; --samples is PV's (training samples per house).
		p.f, p.pv = regressionFlags(dataPV), addPVFlags(fs, dataPV)
		p.f.registerTraining(fs, true)
		p.bf.registerChoice(fs)
		return
	}
	p.f.registerTraining(fs, true)
	p.bf.registerAll(fs)
}

// check checks the parsed training flags (jsonPath: --json).
func (p *fedParse) check(fs *flag.FlagSet, jsonPath string) error {
	if p.csv {
		if err := p.c.check(fs, jsonPath, &p.f, &p.bf); err != nil {
			return err
		}
	} else if err := p.bf.resolve(fs); err != nil {
		return err
	}
	if p.pv != nil {
		if flagSet(fs, "extra") {
			return usagef("--extra applies to --data polynomial")
		}
		if err := p.pv.apply(&p.f); err != nil {
			return err
		}
	}
	if err := p.f.afterParse(fs, jsonPath); err != nil {
		return err
	}
	if p.csv && p.c.save != "" {
		return checkOutput("--save", p.c.save)
	}
	if !p.csv && p.bf.model == modelBNN {
		p.bf.bnnDefaults(&p.f)
		return p.bf.check(&p.f)
	}
	return nil
}

func runServer(args []string, stdout, stderr io.Writer) int {
	stderr = rpc.SyncWriter(stderr) // the log lines come from the sessions' goroutines too
	if m, ok := peerMethodArg(args); ok {
		return runPeerServer(m, args, stdout, stderr)
	}
	fs, sf, p := newFlagSet("server", stderr), &serverFlags{}, &fedParse{}
	sf.add(fs)
	registerMethod(fs)
	p.flags(fs, args, true)
	registerExplain(fs, &p.explain)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	err := p.check(fs, sf.jsonPath)
	var setup *rpc.ServerSetup
	if err == nil {
		setup, err = sf.st.Open(configHash(fs))
	}
	if err == nil {
		err = p.runJob(stdout, stderr, sf.jsonPath, "server", sf.quiet, func(job *train.Job) (*train.Outcome, error) {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return fedtrain.Serve(ctx, setup, job, rpc.NewLog(stderr, "pacpfl server: "))
		})
	}
	if errors.As(err, new(*rpc.Interrupted)) {
		return exitError // rpc logged where to resume from
	}
	if err != nil {
		return fail(stderr, "server", libError(err))
	}
	return exitOK
}

// serverOnlyFlags do not change the training result: they may differ
// between a run and its resumption. Every other flag is in the hash: the
// quorum, the round deadline and the update filters decide which updates
// enter a round.
var serverOnlyFlags = map[string]bool{
	"listen": true, "tls-cert": true, "tls-key": true, "tokens": true, "client-ca": true, "insecure": true,
	"wait": true, "max-payload": true, "quiet": true, "json": true, "checkpoint": true, "checkpoint-every": true,
	"resume": true, "save": true, "max-unregistered": true, "max-unregistered-per-host": true, "explain": true,
}

// configHash is the SHA-256 of every training flag's value (given or
// default), in name order: a checkpoint's configuration (rpc.Checkpoint).
func configHash(fs *flag.FlagSet) string {
	return cli.ValuesHash(fs, func(name string) bool { return serverOnlyFlags[name] })
}

// clientFlags are a client process's flags beyond its data and model.
type clientFlags struct {
	o          rpc.ParticipateOptions
	id         *int
	giveUp     *time.Duration
	maxClasses *int
}

func (c *clientFlags) add(fs *flag.FlagSet) {
	a := &c.o.Auth
	fs.StringVar(&c.o.Server, "server", "", "server `host:port` (required)")
	fs.StringVar(&a.CAFile, "ca", "", "CA certificate `FILE` that signed the server's (PEM)")
	fs.StringVar(&a.TokenFile, "token-file", "",
		"this client's secret token `FILE` (mode 0600; required unless --insecure or a client certificate)")
	fs.StringVar(&a.CertFile, "tls-cert", "",
		"mutual TLS: this client's certificate `FILE` (PEM; pacpfl certs writes client-I.pem)")
	fs.StringVar(&a.KeyFile, "tls-key", "", "mutual TLS: this client's key `FILE` (PEM, mode 0600)")
	fs.BoolVar(&a.Insecure, "insecure", false, "plaintext, for loopback addresses only")
	c.id = fs.Int("client", -1, "this client's index I (0-based, required)")
	c.giveUp = fs.Duration("give-up", 10*time.Minute, "stop retrying after this long without a session (0: never)")
	c.maxClasses = fs.Int("max-classes", rpc.DefaultMaxClasses, "most class labels accepted from the server (--data "+
		"FILE.csv --task classification: the network grows with them)")
}

// check validates the flags whatever the client's data; maxID bounds
// --client (≤ 0: no bound known yet).
func (c *clientFlags) check(maxID int) error {
	switch {
	case c.o.Server == "":
		return usagef("--server host:port is required")
	case *c.id < 0 || (maxID > 0 && *c.id >= maxID):
		return usagef("--client %d: want 0 ≤ I < --clients %d", *c.id, maxID)
	case *c.giveUp < 0:
		return usagef("--give-up %v must be ≥ 0", *c.giveUp)
	case *c.maxClasses < 2:
		return usagef("--max-classes %d must be ≥ 2", *c.maxClasses)
	}
	return nil
}

// participate runs the client until the federation is over.
func (c *clientFlags) participate(stderr io.Writer) int {
	c.o.Client.GiveUp, c.o.Client.MaxClasses = *c.giveUp, *c.maxClasses
	c.o.Client.Log = rpc.NewLog(stderr, "pacpfl client: ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rpc.Participate(ctx, c.o); err != nil {
		return fail(stderr, "client", libError(err))
	}
	return exitOK
}

func runClient(args []string, stdout, stderr io.Writer) int {
	if m, ok := peerMethodArg(args); ok {
		return runPeerClient(m, args, stderr)
	}
	fs := newFlagSet("client", stderr)
	var c clientFlags
	c.add(fs)
	registerMethod(fs)
	// The data and model flags of pacpfl train: give the server's (the
	// client regenerates the data set and keeps client --client; the server
	// refuses a client whose data or model differ). --data FILE.csv: this
	// client's own rows, with the server's column flags.
	var p fedParse
	p.flags(fs, args, false)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := p.check(fs, ""); err != nil {
		return fail(stderr, "client", err)
	}
	maxID := 0
	if !p.csv && p.bf.model == modelGP {
		maxID = p.f.poly.Existing
	}
	if err := c.check(maxID); err != nil {
		return fail(stderr, "client", err)
	}
	var err error
	if c.o.Client, c.o.Source, err = p.client(*c.id, stderr); err != nil {
		return fail(stderr, "client", libError(err))
	}
	return c.participate(stderr)
}

// client is client id of the flags' mode, and the file of its data
// (--data FILE.csv).
func (p *fedParse) client(id int, stderr io.Writer) (rpc.ClientConfig, string, error) {
	f, bf := &p.f, &p.bf
	switch {
	case p.csv:
		cfg, err := rpc.CSVClient(
			rpc.CSVClientOptions{ID: id, Path: p.c.src.Path, Spec: p.c.src.Spec,
				TestFraction: p.c.src.Federate.TestFraction,
				Seed:         f.seed, Inference: f.inference(), BNN: bf.bnnModel(), Hidden: bf.net.Hidden,
				Notes: stderr})
		return cfg, p.c.src.Path, err
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
	f.poly.New = 0 // only the existing clients' data (they are standardised together)
	ds, err := f.dataset(f.seed)
	if err != nil {
		return rpc.ClientConfig{}, "", err
	}
	return rpc.GPClient(id, &ds.Existing[id], ds.D, f.inference()), "", nil
}

func runCerts(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("certs", stderr)
	out := fs.String("out", "", "`DIR` to write ca.pem, server.pem, server.key, client-I.token, client-I.pem and "+
		"client-I.key into (created 0700 if missing; required)")
	hosts := fs.String("hosts", "127.0.0.1,localhost", "comma-separated IP addresses and DNS names of the server")
	clients := fs.Int("clients", 0, "number of client tokens n (required)")
	days := fs.Int("days", 30, "validity of the certificates in days")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	hs, err := rpc.WriteCerts(*out, *hosts, *days, *clients)
	if err != nil {
		return fail(stderr, "certs", libError(err))
	}
	fmt.Fprintf(stdout, "wrote %s: ca.pem, server.pem, server.key (hosts %s) and client-I.token, client-I.pem, "+
		"client-I.key for I = 0 … %d (mode 0600)\n",
		*out, strings.Join(hs, ","), *clients-1)
	return exitOK
}
