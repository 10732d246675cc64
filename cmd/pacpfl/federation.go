package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/credentials"

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

// fedLogger returns a log function writing timestamped lines to w.
func fedLogger(w io.Writer, prefix string) func(format string, a ...any) {
	l := log.New(w, prefix, log.LstdFlags|log.Lmicroseconds)
	return func(format string, a ...any) { l.Printf(format, a...) }
}

// serverFlags are pacpfl server's flags beyond the training's.
type serverFlags struct {
	listen, certFile, keyFile, tokens, clientCA, aggregator, ckptDir, jsonPath string
	insecure, resume, quiet                                                    bool
	roundTimeout, wait                                                         time.Duration
	maxUnreg, maxUnregHost, quorum, byzantine, krumSelect, ckptEvery           int
	maxPayload                                                                 int64
	normFactor, maxUpdNorm, trim                                               float64
}

func (s *serverFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&s.listen, "listen", "", "`host:port` to listen on (required)")
	fs.StringVar(&s.certFile, "tls-cert", "", "server certificate `FILE` (PEM; pacpfl certs writes one)")
	fs.StringVar(&s.keyFile, "tls-key", "", "server key `FILE` (PEM)")
	fs.StringVar(&s.tokens, "tokens", "", "`DIR` with client-I.token for I = 0..n-1 (pacpfl certs); required unless --insecure or --client-ca")
	fs.StringVar(&s.clientCA, "client-ca", "", "mutual TLS: require client certificates signed by this CA `FILE`; a client may register only as the id its certificate names")
	fs.BoolVar(&s.insecure, "insecure", false, "plaintext, for loopback addresses only")
	fs.DurationVar(&s.roundTimeout, "round-timeout", rpc.DefaultRoundTimeout, "deadline of a client update; a client that misses it is dropped from the round and its session cut (0: no deadline: wait for the client, also across reconnections)")
	fs.IntVar(&s.maxUnreg, "max-unregistered", rpc.DefaultMaxUnauth, "most connections that have not registered, in all; further ones are closed on arrival (each may send 64 KiB and has 10 s to register)")
	fs.IntVar(&s.maxUnregHost, "max-unregistered-per-host", rpc.DefaultMaxUnauthPerHost, "most connections that have not registered from one IP address")
	fs.DurationVar(&s.wait, "wait", 0, "give up when not every client has joined after this long (0: wait for ever)")
	fs.Int64Var(&s.maxPayload, "max-payload", rpc.DefaultMaxPayload, "largest payload (particles or gradient) in `bytes`")
	fs.IntVar(&s.quorum, "quorum", 0, "a round completes when at least this many selected clients contributed; failed, late or rejected updates are dropped and logged (0: every selected client must answer)")
	fs.Float64Var(&s.normFactor, "max-norm-factor", 0, "with --quorum: reject an update whose norm exceeds this multiple of the median norm of the round's other accepted updates (judged with 2 or more others; 0: off)")
	fs.Float64Var(&s.maxUpdNorm, "max-update-norm", 0, "reject an update whose L2 norm (all k particles) exceeds this bound, whatever the other clients send, one client per round included (0: off); with --quorum the update is left out, without it the run ends")
	fs.StringVar(&s.aggregator, "aggregator", "mean", "how a round's accepted updates combine: mean, median (coordinate-wise; breakdown point ⌊(u−1)/2⌋/u), trimmed-mean (--trim), krum or multi-krum (--byzantine, --krum-select); docs/math.md")
	fs.Float64Var(&s.trim, "trim", 0, "trimmed-mean: fraction β in (0, 1/2) of the updates dropped at each end of every coordinate")
	fs.IntVar(&s.byzantine, "byzantine", 0, "krum, multi-krum: the number f of hostile updates tolerated (needs 2f+3 updates per round)")
	fs.IntVar(&s.krumSelect, "krum-select", 0, "multi-krum: updates averaged (0: u − f)")
	fs.StringVar(&s.ckptDir, "checkpoint", "", "`DIR` for the server's checkpoint (server.ckpt; written atomically, mode 0600)")
	fs.IntVar(&s.ckptEvery, "checkpoint-every", 10, "write the checkpoint every this many rounds (and on SIGTERM/SIGINT)")
	fs.BoolVar(&s.resume, "resume", false, "continue from the checkpoint in --checkpoint (refused if it is from another configuration)")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress output (joins and refusals are still logged)")
	fs.StringVar(&s.jsonPath, "json", "", "also write the results as JSON to `FILE`")
}

// check refuses unusable server flags, and makes the checkpoint directory.
func (s *serverFlags) check() error {
	switch {
	case s.listen == "":
		return usagef("--listen host:port is required")
	case s.wait < 0 || s.roundTimeout < 0 || s.maxPayload < 1:
		return usagef("--wait, --round-timeout must be ≥ 0 and --max-payload ≥ 1")
	case s.maxUnreg < 1 || s.maxUnregHost < 1:
		return usagef("--max-unregistered and --max-unregistered-per-host must be ≥ 1")
	case s.ckptEvery < 1 || (s.resume && s.ckptDir == ""):
		return usagef("--checkpoint-every must be ≥ 1 and --resume needs --checkpoint DIR")
	case s.quorum < 0 || !(s.normFactor >= 0) || (s.normFactor > 0 && s.quorum == 0):
		return usagef("--quorum must be ≥ 0 and --max-norm-factor ≥ 0, and --max-norm-factor needs --quorum")
	}
	if s.ckptDir == "" {
		return nil
	}
	st, err := os.Stat(s.ckptDir)
	switch {
	case errors.Is(err, os.ErrNotExist) && !s.resume:
		if err := os.Mkdir(s.ckptDir, 0o700); err != nil {
			return usagef("--checkpoint %s: %v", s.ckptDir, pathErr(err))
		}
	case err != nil:
		return usagef("--checkpoint %s: %v", s.ckptDir, pathErr(err))
	case !st.IsDir():
		return usagef("--checkpoint %s is not a directory", s.ckptDir)
	}
	return nil
}

// credentials are the transport of the flags, and refuse a server nobody
// would authenticate to.
func (s *serverFlags) credentials() (credentials.TransportCredentials, error) {
	var creds credentials.TransportCredentials
	var err error
	if s.insecure {
		if s.certFile != "" || s.keyFile != "" || s.clientCA != "" {
			return nil, usagef("--insecure and --tls-cert/--tls-key/--client-ca exclude each other")
		}
		creds, err = rpc.Insecure(s.listen)
	} else {
		creds, err = rpc.ServerTLS(s.certFile, s.keyFile, s.clientCA)
	}
	if err != nil {
		return nil, usageError{err}
	}
	if s.tokens == "" && !s.insecure && s.clientCA == "" {
		return nil, usagef("--tokens DIR or --client-ca FILE is required (pacpfl certs writes client tokens and certificates)")
	}
	return creds, nil
}

// serverRun is what a server mode (--model gp or bnn, --data FILE.csv)
// trains: the data set, the model the clients must run, the training
// configuration, the run (with the remote clients of clients) and its
// report.
type serverRun struct {
	ds                 *data.Dataset
	kind, beta         string
	dim                int
	cfg                *fl.Config
	run                func() (*fl.MethodResult, error)
	report             func(*fl.MethodResult) error
	clients            func() ([]fl.Client, error) // set by runServer
	hashes             [][]byte
	scaling            *data.Scaling
	dataHint           string
	clientIDs, classes []string // --data FILE.csv: the existing clients' IDs, the class labels
}

// setupServer builds the run of the flags' mode.
func setupServer(c *csvFlags, csvMode bool, f *trainFlags, bf *bnnFlags, sf *serverFlags, start time.Time, stdout, jsonOut, stderr io.Writer) (*serverRun, error) {
	r := &serverRun{}
	waitClients := func() ([]fl.Client, error) { return r.clients() }
	switch {
	case csvMode:
		rec, fed, err := readUserData(c, f, stderr)
		if err != nil {
			return nil, err
		}
		r.ds = fed.Dataset
		if data.Task(c.task) == data.Classification {
			bno, err := bf.options(f, r.ds, f.seed)
			if err != nil {
				return nil, err
			}
			m, err := csvBNN(bf, r.ds.D, r.ds.Classes)
			if err != nil {
				return nil, err
			}
			r.kind, r.dim, r.cfg, r.classes = csvBNNKind(bf, r.ds.D), m.Dim(), &bno.Server, fed.ClassNames
		} else {
			o, err := f.options(r.ds, f.seed)
			if err != nil {
				return nil, err
			}
			r.kind, r.dim, r.beta, r.cfg = rpc.GPKind(f.inference()), fl.NewGPModel(r.ds.D).Dim(), o.Beta.String(), &o.Server
		}
		r.hashes, r.scaling, r.dataHint, r.clientIDs = csvDataHashes(rec, fed), &fed.Scaling, csvFedHint, fed.ExistingIDs
		var ur *userRun
		r.run = func() (*fl.MethodResult, error) {
			var err error
			ur, err = trainUserFed(c, f, bf, fed, true, stderr, func(sc *fl.Config, _ []fl.Client) ([]fl.Client, error) {
				// The loop's own configuration with the server's settings.
				cfg := r.cfg
				sc.Resume, sc.Quorum, sc.MaxNormFactor, sc.OnDrop = cfg.Resume, cfg.Quorum, cfg.MaxNormFactor, cfg.OnDrop
				sc.MaxUpdateNorm, sc.Robust = cfg.MaxUpdateNorm, cfg.Robust
				sc.AfterRound, sc.Workers, sc.Progress = cfg.AfterRound, cfg.Workers, cfg.Progress
				return waitClients()
			})
			return nil, err
		}
		r.report = func(*fl.MethodResult) error {
			ur.seconds = time.Since(start).Seconds()
			return ur.write(c, f, stdout, jsonOut, sf.jsonPath)
		}
	case bf.model == modelBNN:
		im, err := bf.images()
		if err != nil {
			return nil, err
		}
		if r.ds, err = bf.dataset(im, f, f.seed); err != nil {
			return nil, err
		}
		ob, err := bf.options(f, r.ds, f.seed)
		if err != nil {
			return nil, err
		}
		model := bf.bnnModel()
		r.kind, r.dim, r.cfg = rpc.BNNKind(model), model.Dim(), &ob.Server
		ob.Clients = func(*fl.BNNModel) ([]fl.Client, error) { return waitClients() }
		r.run = func() (*fl.MethodResult, error) { return fl.RunPACPFLBNN(r.ds, model, ob) }
		r.report = func(res *fl.MethodResult) error {
			return writeBNNReport(stdout, jsonOut, f, bf, model, r.ds, ob, res, start, sf.jsonPath)
		}
	default:
		var err error
		if r.ds, err = f.dataset(f.seed); err != nil {
			return nil, err
		}
		o, err := f.options(r.ds, f.seed)
		if err != nil {
			return nil, err
		}
		r.kind, r.dim, r.beta, r.cfg = rpc.GPKind(f.inference()), fl.NewGPModel(r.ds.D).Dim(), o.Beta.String(), &o.Server
		o.Clients = func(*fl.GPModel) ([]fl.Client, error) { return waitClients() }
		g := fl.NewGPModel(r.ds.D)
		g.Inference = f.inference()
		r.run = func() (*fl.MethodResult, error) { return fl.RunPACPFL(r.ds, g, o, fl.MethodPACPFL) }
		r.report = func(res *fl.MethodResult) error {
			return writeTrainReport(stdout, jsonOut, f, r.ds, o, res, start, sf.jsonPath)
		}
	}
	// The server regenerated the data set: it can tell a client started
	// with other data flags from one of this run.
	if r.hashes == nil {
		r.hashes = make([][]byte, len(r.ds.Existing))
		for i := range r.ds.Existing {
			r.hashes[i] = rpc.DataHash(&r.ds.Existing[i])
		}
	}
	return r, nil
}

// parseServer parses and checks the flags of pacpfl server.
func parseServer(args []string, stderr io.Writer) (sf *serverFlags, f *trainFlags, bf *bnnFlags, c *csvFlags, csvMode bool, hash string, st int, ok bool) {
	fs := newFlagSet("server", stderr)
	sf, f, bf, c = &serverFlags{}, &trainFlags{}, &bnnFlags{}, &csvFlags{}
	addTrainFlags(fs, f)
	addGPInferenceFlags(fs, f)
	addBNNFlags(fs, bf)
	sf.add(fs)
	// --data FILE.csv: the clients read their own rows of the file.
	csvMode = csvDataArg(args)
	if csvMode {
		fs = dropFlags(fs, csvDropped...)
		c.add(fs)
	}
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, nil, nil, nil, false, "", st, false
	}
	check := func() error {
		if csvMode {
			if err := c.check(fs, f, bf); err != nil {
				return err
			}
			if c.save != "" {
				if err := checkOutput("--save", c.save); err != nil {
					return err
				}
			}
		} else if err := bf.resolve(fs); err != nil {
			return err
		}
		if err := f.afterParse(fs, sf.jsonPath); err != nil {
			return err
		}
		if !csvMode && bf.model == modelBNN {
			bf.bnnDefaults(f)
			if err := bf.check(f); err != nil {
				return err
			}
		}
		return sf.check()
	}
	if err := check(); err != nil {
		return nil, nil, nil, nil, false, "", fail(stderr, "server", err), false
	}
	return sf, f, bf, c, csvMode, configHash(fs), exitOK, true
}

func runServer(args []string, stdout, stderr io.Writer) int {
	// The log lines come from the sessions' goroutines too.
	stderr = &lockedWriter{w: stderr}
	sf, f, bf, c, csvMode, hash, st, ok := parseServer(args, stderr)
	if !ok {
		return st
	}
	var resumed *fl.State
	if sf.resume {
		var err error
		if resumed, err = loadCheckpoint(sf.ckptDir, hash); err != nil {
			return fail(stderr, "server", err)
		}
	}
	creds, err := sf.credentials()
	if err != nil {
		return fail(stderr, "server", err)
	}
	stdout, jsonOut := reportStreams(sf.jsonPath, stdout, stderr)
	r, err := setupServer(c, csvMode, f, bf, sf, time.Now(), stdout, jsonOut, stderr)
	if err != nil {
		return fail(stderr, "server", err)
	}
	fo, err := r.federateOptions(sf, creds, resumed, hash, c, fedLogger(stderr, "pacpfl server: "))
	if err != nil {
		return fail(stderr, "server", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(stderr, "server", r.cfg.Rounds, sf.quiet)
	prog.hideLML = r.cfg.DP != nil
	r.cfg.Progress = prog.update
	res, err := rpc.Federate(ctx, fo, func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		r.clients = clients
		return r.run()
	})
	prog.done()
	var intr *rpc.Interrupted
	var le *rpc.ListenError
	switch {
	case errors.As(err, &le):
		return fail(stderr, "server", usagef("--listen %s: %v", sf.listen, le.Err))
	case errors.As(err, &intr):
		if sf.ckptDir != "" {
			fo.Server.Log("stopped after round %d: checkpoint in %s; continue with the same flags and --resume", intr.Round, sf.ckptDir)
		} else {
			fo.Server.Log("stopped after round %d (no --checkpoint: the state is lost)", intr.Round)
		}
		return exitError
	case err != nil:
		return fail(stderr, "server", err)
	}
	if err := r.report(res); err != nil {
		return fail(stderr, "server", err)
	}
	return exitOK
}

// federateOptions are rpc.Federate's options for the run: the update
// filters and the aggregation of the flags (checked before listening),
// the tokens, the checkpoint and the log.
func (r *serverRun) federateOptions(sf *serverFlags, creds credentials.TransportCredentials, resumed *fl.State, hash string, c *csvFlags, logf func(string, ...any)) (rpc.FederateOptions, error) {
	cfg, n := r.cfg, len(r.ds.Existing)
	cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm = sf.quorum, sf.normFactor, sf.maxUpdNorm
	cfg.Robust = fl.Robust{Rule: fl.RobustRule(sf.aggregator), Trim: sf.trim, Byzantine: sf.byzantine, Select: sf.krumSelect}
	if err := cfg.Validate(n); err != nil {
		return rpc.FederateOptions{}, usagef("%s", strings.TrimPrefix(err.Error(), "server: "))
	}
	var toks [][]byte
	if sf.tokens != "" {
		var err error
		if toks, err = rpc.ReadTokenDir(sf.tokens, n); err != nil {
			return rpc.FederateOptions{}, usagef("--tokens: %v", err)
		}
	}
	rt := sf.roundTimeout
	if rt == 0 {
		rt = -1 // the library's "no deadline"
	}
	fo := rpc.FederateOptions{Listen: sf.listen, Creds: creds, Train: cfg, Wait: sf.wait, Resume: resumed,
		Server: rpc.ServerConfig{Clients: n, DataHashes: r.hashes, DataHint: r.dataHint, Scaling: r.scaling, Classes: r.classes,
			ModelKind: r.kind, Dim: r.dim, Beta: r.beta, Tokens: toks, ClientCerts: sf.clientCA != "", MaxPayload: sf.maxPayload, RoundTimeout: rt,
			Limits: rpc.Limits{MaxUnauth: sf.maxUnreg, MaxUnauthPerHost: sf.maxUnregHost}, Log: logf}}
	if sf.ckptDir != "" {
		fo.Save = func(st *fl.State) error { return saveCheckpoint(sf.ckptDir, hash, st) }
		fo.SaveEvery = sf.ckptEvery
	}
	fo.OnListen = func(net.Addr) {
		if r.clientIDs != nil {
			ids := make([]string, len(r.clientIDs))
			for i, id := range r.clientIDs {
				ids[i] = fmt.Sprintf("%d = %q", i, id)
			}
			logf("client ids (--client) of %s: %s", c.path, strings.Join(ids, ", "))
		}
		if resumed != nil {
			logf("resuming from %s after round %d", filepath.Join(sf.ckptDir, checkpointName), resumed.Round)
		}
	}
	return fo, nil
}

// lockedWriter serialises the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func runClient(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("client", stderr)
	server := fs.String("server", "", "server `host:port` (required)")
	caFile := fs.String("ca", "", "CA certificate `FILE` that signed the server's (PEM)")
	tokenFile := fs.String("token-file", "", "this client's secret token `FILE` (mode 0600; required unless --insecure or a client certificate)")
	certFile := fs.String("tls-cert", "", "mutual TLS: this client's certificate `FILE` (PEM; pacpfl certs writes client-I.pem)")
	keyFile := fs.String("tls-key", "", "mutual TLS: this client's key `FILE` (PEM, mode 0600)")
	insec := fs.Bool("insecure", false, "plaintext, for loopback addresses only")
	id := fs.Int("client", -1, "this client's index I (0-based, required)")
	// The data and model flags of pacpfl train: give the server's (the
	// client regenerates the data set and keeps client --client; the
	// server refuses a client whose data or model differ).
	var f trainFlags
	var bf bnnFlags
	addTrainFlags(fs, &f)
	addGPInferenceFlags(fs, &f)
	addBNNFlags(fs, &bf)
	giveUp := fs.Duration("give-up", 10*time.Minute, "stop retrying after this long without a session (0: never)")
	maxClasses := fs.Int("max-classes", rpc.DefaultMaxClasses, "most class labels accepted from the server (--data FILE.csv --task classification: the network grows with them)")
	// --data FILE.csv: this client's own rows, with the server's column
	// flags.
	csvMode := csvDataArg(args)
	var c csvFlags
	if csvMode {
		fs = dropFlags(fs, csvDropped...)
		c.add(fs)
		fs = dropFlags(fs, "new-clients", "save", "save-clients")
	}
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if csvMode {
		if err := c.check(fs, &f, &bf); err != nil {
			return fail(stderr, "client", err)
		}
	} else if err := bf.resolve(fs); err != nil {
		return fail(stderr, "client", err)
	}
	if err := f.afterParse(fs, ""); err != nil {
		return fail(stderr, "client", err)
	}
	if !csvMode && bf.model == modelBNN {
		bf.bnnDefaults(&f)
		if err := bf.check(&f); err != nil {
			return fail(stderr, "client", err)
		}
	}
	switch {
	case *server == "":
		return fail(stderr, "client", usagef("--server host:port is required"))
	case *id < 0 || (!csvMode && bf.model == modelGP && *id >= f.clients):
		return fail(stderr, "client", usagef("--client %d: want 0 ≤ I < --clients %d", *id, f.clients))
	case *giveUp < 0:
		return fail(stderr, "client", usagef("--give-up %v must be ≥ 0", *giveUp))
	case *maxClasses < 2:
		return fail(stderr, "client", usagef("--max-classes %d must be ≥ 2", *maxClasses))
	}
	var creds credentials.TransportCredentials
	var err error
	if *insec {
		if *certFile != "" || *keyFile != "" {
			return fail(stderr, "client", usagef("--insecure and --tls-cert/--tls-key exclude each other"))
		}
		creds, err = rpc.Insecure(*server)
	} else {
		creds, err = rpc.ClientTLS(*caFile, *server, *certFile, *keyFile)
	}
	if err != nil {
		return fail(stderr, "client", usageError{err})
	}
	var token []byte
	switch {
	case *tokenFile != "":
		if token, err = rpc.ReadTokenFile(*tokenFile); err != nil {
			return fail(stderr, "client", usagef("--token-file: %v", err))
		}
	case !*insec && *certFile == "":
		return fail(stderr, "client", usagef("--token-file or --tls-cert/--tls-key is required (pacpfl certs writes client tokens and certificates)"))
	}
	var cfg rpc.ClientConfig
	dataDesc := ""
	switch {
	case csvMode:
		if cfg, err = csvClient(&c, &f, &bf, *id, stderr); err != nil {
			return fail(stderr, "client", err)
		}
		dataDesc = " of " + c.path
	case bf.model == modelBNN:
		im, err := bf.images()
		if err != nil {
			return fail(stderr, "client", err)
		}
		// Only this client's split is built.
		cd, err := bf.client(im, &f, f.seed, *id)
		if err != nil {
			return fail(stderr, "client", err)
		}
		cfg = rpc.BNNClient(*id, cd, bf.bnnModel())
	default:
		f.newClients = 0 // only the existing clients' data (they are standardised together)
		ds, err := f.dataset(f.seed)
		if err != nil {
			return fail(stderr, "client", err)
		}
		cfg = rpc.GPClient(*id, &ds.Existing[*id], ds.D, f.inference())
	}
	logf := fedLogger(stderr, "pacpfl client: ")
	cfg.Token, cfg.GiveUp, cfg.Log, cfg.MaxClasses = token, *giveUp, logf, *maxClasses
	conn, err := rpc.Dial(*server, creds)
	if err != nil {
		return fail(stderr, "client", usageError{err})
	}
	defer conn.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf("client %d (%d training samples%s) connecting to %s", *id, cfg.DataSize, dataDesc, *server)
	if err := rpc.Serve(ctx, conn, cfg); err != nil {
		return fail(stderr, "client", err)
	}
	return exitOK
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
	if st, err := os.Stat(*out); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(*out, 0o700); err != nil {
			return fail(stderr, "certs", usagef("--out %s: %v", *out, pathErr(err)))
		}
	} else if err != nil {
		return fail(stderr, "certs", usagef("--out %s: %v", *out, pathErr(err)))
	} else if !st.IsDir() {
		return fail(stderr, "certs", usagef("--out %s is not a directory", *out))
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
	files := []struct {
		name string
		data []byte
	}{{"ca.pem", c.CA}, {"server.pem", c.ServerCert}, {"server.key", c.ServerKey}}
	for i := 0; i < *clients; i++ {
		files = append(files, struct {
			name string
			data []byte
		}{rpc.TokenFileName(i), rpc.EncodeToken(rpc.NewToken())}, struct {
			name string
			data []byte
		}{fmt.Sprintf("client-%d.pem", i), c.ClientCert[i]}, struct {
			name string
			data []byte
		}{fmt.Sprintf("client-%d.key", i), c.ClientKey[i]})
	}
	for _, fl := range files {
		if err := writeSecret("--out", filepath.Join(*out, fl.name), fl.data); err != nil {
			return fail(stderr, "certs", err)
		}
	}
	fmt.Fprintf(stdout, "wrote %s: ca.pem, server.pem, server.key (hosts %s) and client-I.token, client-I.pem, client-I.key for I = 0 … %d (mode 0600)\n",
		*out, strings.Join(hs, ","), *clients-1)
	return exitOK
}
