package main

import (
	"context"
	"errors"
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

func runServer(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("server", stderr)
	var f trainFlags
	addTrainFlags(fs, &f)
	addGPInferenceFlags(fs, &f)
	listen := fs.String("listen", "", "`host:port` to listen on (required)")
	var bf bnnFlags
	addBNNFlags(fs, &bf)
	certFile := fs.String("tls-cert", "", "server certificate `FILE` (PEM; pacpfl certs writes one)")
	keyFile := fs.String("tls-key", "", "server key `FILE` (PEM)")
	tokens := fs.String("tokens", "", "`DIR` with client-I.token for I = 0..n-1 (pacpfl certs); required unless --insecure or --client-ca")
	clientCA := fs.String("client-ca", "", "mutual TLS: require client certificates signed by this CA `FILE`; a client may register only as the id its certificate names")
	insec := fs.Bool("insecure", false, "plaintext, for loopback addresses only")
	roundTimeout := fs.Duration("round-timeout", rpc.DefaultRoundTimeout, "deadline of a client update; a client that misses it is dropped from the round and its session cut (0: no deadline: wait for the client, also across reconnections)")
	maxUnreg := fs.Int("max-unregistered", rpc.DefaultMaxUnauth, "most connections that have not registered, in all; further ones are closed on arrival (each may send 64 KiB and has 10 s to register)")
	maxUnregHost := fs.Int("max-unregistered-per-host", rpc.DefaultMaxUnauthPerHost, "most connections that have not registered from one IP address")
	wait := fs.Duration("wait", 0, "give up when not every client has joined after this long (0: wait for ever)")
	maxPayload := fs.Int64("max-payload", rpc.DefaultMaxPayload, "largest payload (particles or gradient) in `bytes`")
	quorum := fs.Int("quorum", 0, "a round completes when at least this many selected clients contributed; failed, late or rejected updates are dropped and logged (0: every selected client must answer)")
	normFactor := fs.Float64("max-norm-factor", 0, "with --quorum: reject an update whose norm exceeds this multiple of the median norm of the round's other accepted updates (judged with 2 or more others; 0: off)")
	maxUpdNorm := fs.Float64("max-update-norm", 0, "reject an update whose L2 norm (all k particles) exceeds this bound, whatever the other clients send, one client per round included (0: off); with --quorum the update is left out, without it the run ends")
	aggregator := fs.String("aggregator", "mean", "how a round's accepted updates combine: mean, median (coordinate-wise; breakdown point ⌊(u−1)/2⌋/u), trimmed-mean (--trim), krum or multi-krum (--byzantine, --krum-select); docs/math.md")
	trim := fs.Float64("trim", 0, "trimmed-mean: fraction β in (0, 1/2) of the updates dropped at each end of every coordinate")
	byzantine := fs.Int("byzantine", 0, "krum, multi-krum: the number f of hostile updates tolerated (needs 2f+3 updates per round)")
	krumSelect := fs.Int("krum-select", 0, "multi-krum: updates averaged (0: u − f)")
	ckptDir := fs.String("checkpoint", "", "`DIR` for the server's checkpoint (server.ckpt; written atomically, mode 0600)")
	ckptEvery := fs.Int("checkpoint-every", 10, "write the checkpoint every this many rounds (and on SIGTERM/SIGINT)")
	resume := fs.Bool("resume", false, "continue from the checkpoint in --checkpoint (refused if it is from another configuration)")
	quiet := fs.Bool("quiet", false, "no progress output (joins and refusals are still logged)")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	// --data FILE.csv: the clients read their own rows of the file.
	csvMode := csvDataArg(args)
	var c csvFlags
	if csvMode {
		fs = dropFlags(fs, csvDropped...)
		c.add(fs)
	}
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	// The log lines come from the sessions' goroutines too.
	stderr = &lockedWriter{w: stderr}
	if csvMode {
		if err := c.check(fs, &f, &bf); err != nil {
			return fail(stderr, "server", err)
		}
		if c.save != "" {
			if err := checkOutput("--save", c.save); err != nil {
				return fail(stderr, "server", err)
			}
		}
	} else if err := bf.resolve(fs); err != nil {
		return fail(stderr, "server", err)
	}
	if err := f.afterParse(fs, *jsonPath); err != nil {
		return fail(stderr, "server", err)
	}
	if !csvMode && bf.model == modelBNN {
		bf.bnnDefaults(&f)
		if err := bf.check(&f); err != nil {
			return fail(stderr, "server", err)
		}
	}
	if *listen == "" {
		return fail(stderr, "server", usagef("--listen host:port is required"))
	}
	if *wait < 0 || *roundTimeout < 0 || *maxPayload < 1 {
		return fail(stderr, "server", usagef("--wait, --round-timeout must be ≥ 0 and --max-payload ≥ 1"))
	}
	if *maxUnreg < 1 || *maxUnregHost < 1 {
		return fail(stderr, "server", usagef("--max-unregistered and --max-unregistered-per-host must be ≥ 1"))
	}
	if *ckptEvery < 1 || (*resume && *ckptDir == "") {
		return fail(stderr, "server", usagef("--checkpoint-every must be ≥ 1 and --resume needs --checkpoint DIR"))
	}
	if *quorum < 0 || !(*normFactor >= 0) || (*normFactor > 0 && *quorum == 0) {
		return fail(stderr, "server", usagef("--quorum must be ≥ 0 and --max-norm-factor ≥ 0, and --max-norm-factor needs --quorum"))
	}
	if *ckptDir != "" {
		if st, err := os.Stat(*ckptDir); errors.Is(err, os.ErrNotExist) && !*resume {
			if err := os.Mkdir(*ckptDir, 0o700); err != nil {
				return fail(stderr, "server", usagef("--checkpoint %s: %v", *ckptDir, pathErr(err)))
			}
		} else if err != nil {
			return fail(stderr, "server", usagef("--checkpoint %s: %v", *ckptDir, pathErr(err)))
		} else if !st.IsDir() {
			return fail(stderr, "server", usagef("--checkpoint %s is not a directory", *ckptDir))
		}
	}
	hash := configHash(fs)
	var resumed *fl.State
	if *resume {
		var err error
		if resumed, err = loadCheckpoint(*ckptDir, hash); err != nil {
			return fail(stderr, "server", err)
		}
	}
	var creds credentials.TransportCredentials
	var err error
	if *insec {
		if *certFile != "" || *keyFile != "" || *clientCA != "" {
			return fail(stderr, "server", usagef("--insecure and --tls-cert/--tls-key/--client-ca exclude each other"))
		}
		creds, err = rpc.Insecure(*listen)
	} else {
		creds, err = rpc.ServerTLS(*certFile, *keyFile, *clientCA)
	}
	if err != nil {
		return fail(stderr, "server", usageError{err})
	}
	if *tokens == "" && !*insec && *clientCA == "" {
		return fail(stderr, "server", usagef("--tokens DIR or --client-ca FILE is required (pacpfl certs writes client tokens and certificates)"))
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	start := time.Now()
	// The data set, model and run of --model gp or bnn; the server loop and
	// everything below are the same for both.
	var (
		ds          *data.Dataset
		kind, beta  string
		dim         int
		cfg         *fl.Config
		run         func() (*fl.MethodResult, error)
		report      func(*fl.MethodResult) error
		waitClients func() ([]fl.Client, error)
		hashes      [][]byte
		scaling     *data.Scaling
		dataHint    string
		clientIDs   []string // --data FILE.csv: the existing clients' IDs
		classes     []string // --data FILE.csv --task classification
	)
	switch {
	case csvMode:
		rec, fed, err := readUserData(&c, &f, stderr)
		if err != nil {
			return fail(stderr, "server", err)
		}
		ds = fed.Dataset
		if data.Task(c.task) == data.Classification {
			bno, err := bf.options(&f, ds, f.seed)
			if err != nil {
				return fail(stderr, "server", err)
			}
			m, err := csvBNN(&bf, ds.D, ds.Classes)
			if err != nil {
				return fail(stderr, "server", err)
			}
			kind, dim, cfg, classes = csvBNNKind(&bf, ds.D), m.Dim(), &bno.Server, fed.ClassNames
		} else {
			o, err := f.options(ds, f.seed)
			if err != nil {
				return fail(stderr, "server", err)
			}
			kind, dim, beta, cfg = rpc.GPKind(f.inference()), fl.NewGPModel(ds.D).Dim(), o.Beta.String(), &o.Server
		}
		hashes, scaling, dataHint, clientIDs = csvDataHashes(rec, fed), &fed.Scaling, csvFedHint, fed.ExistingIDs
		var ur *userRun
		run = func() (*fl.MethodResult, error) {
			var err error
			ur, err = trainUserFed(&c, &f, &bf, fed, true, stderr, func(sc *fl.Config, _ []fl.Client) ([]fl.Client, error) {
				// The loop's own configuration with the server's settings.
				sc.Resume, sc.Quorum, sc.MaxNormFactor, sc.OnDrop = cfg.Resume, cfg.Quorum, cfg.MaxNormFactor, cfg.OnDrop
				sc.MaxUpdateNorm, sc.Robust = cfg.MaxUpdateNorm, cfg.Robust
				sc.AfterRound, sc.Workers, sc.Progress = cfg.AfterRound, cfg.Workers, cfg.Progress
				return waitClients()
			})
			return nil, err
		}
		report = func(*fl.MethodResult) error {
			ur.seconds = time.Since(start).Seconds()
			return ur.write(&c, &f, stdout, jsonOut, *jsonPath)
		}
	case bf.model == modelBNN:
		im, err := bf.images()
		if err != nil {
			return fail(stderr, "server", err)
		}
		if ds, err = bf.dataset(im, &f, f.seed); err != nil {
			return fail(stderr, "server", err)
		}
		ob, err := bf.options(&f, ds, f.seed)
		if err != nil {
			return fail(stderr, "server", err)
		}
		model := bf.bnnModel()
		kind, dim, cfg = rpc.BNNKind(model), model.Dim(), &ob.Server
		ob.Clients = func(*fl.BNNModel) ([]fl.Client, error) { return waitClients() }
		run = func() (*fl.MethodResult, error) { return fl.RunPACPFLBNN(ds, model, ob) }
		report = func(res *fl.MethodResult) error {
			return writeBNNReport(stdout, jsonOut, &f, &bf, model, ds, ob, res, start, *jsonPath)
		}
	default:
		if ds, err = f.dataset(f.seed); err != nil {
			return fail(stderr, "server", err)
		}
		o, err := f.options(ds, f.seed)
		if err != nil {
			return fail(stderr, "server", err)
		}
		kind, dim, beta, cfg = rpc.GPKind(f.inference()), fl.NewGPModel(ds.D).Dim(), o.Beta.String(), &o.Server
		o.Clients = func(*fl.GPModel) ([]fl.Client, error) { return waitClients() }
		g := fl.NewGPModel(ds.D)
		g.Inference = f.inference()
		run = func() (*fl.MethodResult, error) { return fl.RunPACPFL(ds, g, o, fl.MethodPACPFL) }
		report = func(res *fl.MethodResult) error {
			return writeTrainReport(stdout, jsonOut, &f, ds, o, res, start, *jsonPath)
		}
	}
	// The update filters and the aggregation, checked before listening.
	cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm = *quorum, *normFactor, *maxUpdNorm
	cfg.Robust = fl.Robust{Rule: fl.RobustRule(*aggregator), Trim: *trim, Byzantine: *byzantine, Select: *krumSelect}
	if err := cfg.Validate(len(ds.Existing)); err != nil {
		return fail(stderr, "server", usagef("%s", strings.TrimPrefix(err.Error(), "server: ")))
	}
	var toks [][]byte
	if *tokens != "" {
		if toks, err = rpc.ReadTokenDir(*tokens, len(ds.Existing)); err != nil {
			return fail(stderr, "server", usagef("--tokens: %v", err))
		}
	}
	logf := fedLogger(stderr, "pacpfl server: ")
	// The server regenerated the data set: it can tell a client started
	// with other data flags from one of this run.
	if hashes == nil {
		hashes = make([][]byte, len(ds.Existing))
		for i := range ds.Existing {
			hashes[i] = rpc.DataHash(&ds.Existing[i])
		}
	}
	rt := *roundTimeout
	if rt == 0 {
		rt = -1 // the library's "no deadline"
	}
	fo := rpc.FederateOptions{Listen: *listen, Creds: creds, Train: cfg, Wait: *wait, Resume: resumed,
		Server: rpc.ServerConfig{Clients: len(ds.Existing), DataHashes: hashes, DataHint: dataHint, Scaling: scaling, Classes: classes,
			ModelKind: kind, Dim: dim, Beta: beta, Tokens: toks, ClientCerts: *clientCA != "", MaxPayload: *maxPayload, RoundTimeout: rt,
			Limits: rpc.Limits{MaxUnauth: *maxUnreg, MaxUnauthPerHost: *maxUnregHost}, Log: logf}}
	if *ckptDir != "" {
		fo.Save = func(st *fl.State) error { return saveCheckpoint(*ckptDir, hash, st) }
		fo.SaveEvery = *ckptEvery
	}
	fo.OnListen = func(net.Addr) {
		if clientIDs != nil {
			ids := make([]string, len(clientIDs))
			for i, id := range clientIDs {
				ids[i] = fmt.Sprintf("%d = %q", i, id)
			}
			logf("client ids (--client) of %s: %s", c.path, strings.Join(ids, ", "))
		}
		if resumed != nil {
			logf("resuming from %s after round %d", filepath.Join(*ckptDir, checkpointName), resumed.Round)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(stderr, "server", cfg.Rounds, *quiet)
	prog.hideLML = cfg.DP != nil
	cfg.Progress = prog.update
	res, err := rpc.Federate(ctx, fo, func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		waitClients = clients
		return run()
	})
	prog.done()
	var intr *rpc.Interrupted
	var le *rpc.ListenError
	if errors.As(err, &le) {
		return fail(stderr, "server", usagef("--listen %s: %v", *listen, le.Err))
	}
	if errors.As(err, &intr) {
		if *ckptDir != "" {
			logf("stopped after round %d: checkpoint in %s; continue with the same flags and --resume", intr.Round, *ckptDir)
		} else {
			logf("stopped after round %d (no --checkpoint: the state is lost)", intr.Round)
		}
		return exitError
	}
	if err != nil {
		return fail(stderr, "server", err)
	}
	if err := report(res); err != nil {
		return fail(stderr, "server", err)
	}
	return exitOK
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
