package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/rpc"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitListening returns once addr accepts TCP connections, failing the
// test after limit.
func waitListening(t *testing.T, addr string, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(end) {
			t.Fatalf("nothing listens on %s after %v: %v", addr, limit, err)
		}
	}
}

// readTimelessReport reads a --json report without its timing fields.
func readTimelessReport(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "train_seconds")
	delete(m, "total_seconds")
	return m
}

// pacpfl certs, then a server and 3 clients over TLS with tokens, and again
// with client certificates (mutual TLS): the same report, to the last bit of
// every figure, as pacpfl train.
func TestServerClientsMatchTrain(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if code, _, errOut := runCLI("certs", "--out", certs, "--clients", "3"); code != exitOK {
		t.Fatalf("certs: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"ca.pem", "server.pem", "server.key", "client-0.token", "client-2.token",
		"client-1.pem", "client-1.key"} {
		fi, err := os.Stat(filepath.Join(certs, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", name, fi.Mode().Perm())
		}
	}
	flags := []string{"--clients", "3", "--new-clients", "2", "--rounds", "6", "--k", "2", "--batch", "4", "-c", "2",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--seed", "5", "--quiet"}
	trainJSON, serverJSON := filepath.Join(dir, "train.json"), filepath.Join(dir, "server.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, flags...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	for _, mode := range []string{"tokens", "mutual TLS"} {
		serverAuth := []string{"--tokens", certs}
		clientAuth := func(i int) []string {
			return []string{"--token-file", filepath.Join(certs, fmt.Sprintf("client-%d.token", i))}
		}
		if mode == "mutual TLS" {
			serverAuth = []string{"--client-ca", filepath.Join(certs, "ca.pem")}
			clientAuth = func(i int) []string {
				return []string{"--tls-cert", filepath.Join(certs, fmt.Sprintf("client-%d.pem", i)), "--tls-key",
					filepath.Join(certs, fmt.Sprintf("client-%d.key", i))}
			}
		}
		addr := freeAddr(t)
		var wg sync.WaitGroup
		var serverCode int
		var serverErr string
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"server", "--listen", addr, "--tls-cert", filepath.Join(certs, "server.pem"),
				"--tls-key", filepath.Join(certs, "server.key"), "--wait", "30s", "--json", serverJSON}, serverAuth...)
			serverCode, _, serverErr = runCLI(append(args, flags...)...)
		}()
		codes := make([]int, 3)
		errs := make([]string, 3)
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := append([]string{"client", "--server", addr, "--ca", filepath.Join(certs, "ca.pem"), "--client",
					fmt.Sprint(i),
					"--clients", "3", "--seed", "5", "--give-up", "30s"}, clientAuth(i)...)
				codes[i], _, errs[i] = runCLI(args...)
			}()
		}
		wg.Wait()
		if serverCode != exitOK {
			t.Fatalf("%s: server: exit %d: %s", mode, serverCode, serverErr)
		}
		for i := range codes {
			if codes[i] != exitOK {
				t.Errorf("%s: client %d: exit %d: %s", mode, i, codes[i], errs[i])
			}
		}
		for _, want := range []string{"client 0 joined", "client 2 joined", "all 3 clients joined"} {
			if !strings.Contains(serverErr, want) {
				t.Errorf("%s: server log lacks %q:\n%s", mode, want, serverErr)
			}
		}
		want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, serverJSON)
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Errorf("%s: server report differs from train's:\n%s\n%s", mode, gb, wb)
		}
		os.Remove(serverJSON)
	}
}

// Plaintext is refused off loopback; TLS needs its files; a token file that
// others can read is refused.
func TestFederationBadInvocations(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.token")
	if err := os.WriteFile(loose, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"server", "--listen", "0.0.0.0:7000", "--insecure", "--clients", "2"}, "--insecure refused"},
		{[]string{"server", "--listen", "10.1.2.3:7000", "--insecure", "--clients", "2"}, "--insecure refused"},
		{[]string{"server", "--listen", "127.0.0.1:7000", "--clients", "2"}, "--tls-cert"},
		{[]string{"server", "--listen", "127.0.0.1:7000", "--insecure", "--client-ca", loose, "--clients", "2"},
			"exclude each other"},
		{[]string{"client", "--server", "127.0.0.1:7000", "--ca", loose, "--tls-cert", loose, "--client", "0"},
			"both --tls-cert and --tls-key"},
		{[]string{"server", "--clients", "2"}, "--listen"},
		{[]string{"server", "--listen", "127.0.0.1:7000", "--tls-cert", loose, "--tls-key", loose, "--clients", "2"},
			"TLS certificate"},
		{[]string{"client", "--server", "192.168.0.1:7000", "--insecure", "--client", "0"}, "--insecure refused"},
		{[]string{"client", "--server", "127.0.0.1:7000", "--client", "0"}, "--ca"},
		{[]string{"client", "--server", "127.0.0.1:7000", "--insecure", "--client", "0", "--token-file", loose},
			"others can read it"},
		{[]string{"client", "--server", "127.0.0.1:7000", "--insecure", "--client", "5", "--clients", "3"},
			"--client 5"},
		{[]string{"certs", "--clients", "2"}, "--out"},
		{[]string{"certs", "--out", filepath.Join(dir, "c"), "--clients", "0"}, "--clients 0"},
		{[]string{"certs", "--out", loose, "--clients", "1"}, "not a directory"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
}

// runFederation runs a plaintext loopback server with the given flags and
// n clients in-process and returns the server's exit status and stderr.
func runFederation(t *testing.T, n int, seed string, serverArgs ...string) (int, string) {
	return runFederationGiveUp(t, n, seed, "60s", serverArgs...)
}

// runFederationGiveUp is runFederation with the clients' --give-up (a
// server that fails keeps its clients retrying for that long).
func runFederationGiveUp(t *testing.T, n int, seed, giveUp string, serverArgs ...string) (int, string) {
	return runFederationClients(t, n, seed, giveUp, nil, serverArgs...)
}

// runFederationClients is runFederationGiveUp with extra client flags.
func runFederationClients(t *testing.T, n int, seed, giveUp string, clientArgs []string,
	serverArgs ...string) (int, string) {
	t.Helper()
	addr := freeAddr(t)
	var wg sync.WaitGroup
	var code int
	var errOut string
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, _, errOut = runCLI(
			append([]string{"server", "--listen", addr, "--insecure", "--wait", "30s"}, serverArgs...)...)
	}()
	codes, errs := make([]int, n), make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"client", "--server", addr, "--insecure", "--client", fmt.Sprint(i),
				"--clients", fmt.Sprint(n), "--seed", seed, "--give-up", giveUp}, clientArgs...)
			codes[i], _, errs[i] = runCLI(args...)
		}()
	}
	wg.Wait()
	// A client fails with its server; alone, it is the test's failure.
	for i, c := range codes {
		if c != exitOK && code == exitOK {
			t.Errorf("client %d: exit %d: %s", i, c, errs[i])
		}
	}
	return code, errOut
}

// Checkpoints: a run resumed from its checkpoint reports exactly what train
// does; a corrupted checkpoint or one of another configuration is refused.
func TestServerCheckpointResume(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	flags := []string{"--clients", "3", "--new-clients", "1", "--rounds", "4", "--k", "2", "-c", "2", "--batch", "4",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--seed", "8", "--quiet"}
	trainJSON := filepath.Join(dir, "train.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, flags...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	if code, errOut := runFederation(t, 3, "8",
		append([]string{"--checkpoint", ckpt, "--checkpoint-every", "2"}, flags...)...); code != exitOK {
		t.Fatalf("server: exit %d: %s", code, errOut)
	}
	fi, err := os.Stat(filepath.Join(ckpt, rpc.CheckpointFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint: %v, mode %v", err, fi)
	}
	resumedJSON := filepath.Join(dir, "resumed.json")
	code, errOut := runFederation(t, 3, "8",
		append([]string{"--checkpoint", ckpt, "--resume", "--json", resumedJSON}, flags...)...)
	if code != exitOK || !strings.Contains(errOut, "resuming from") {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, resumedJSON)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("resumed report differs from train's:\n%s\n%s", gb, wb)
	}
	// Another configuration (a different τ) is refused before listening.
	other := append([]string{"server", "--listen", "127.0.0.1:1", "--insecure", "--checkpoint", ckpt, "--resume",
		"--tau", "0.3"}, flags...)
	if code, _, errOut := runCLI(other...); code != exitUsage || !strings.Contains(errOut, "another configuration") {
		t.Errorf("other config: exit %d: %s", code, errOut)
	}
	// So is one whose quorum, round deadline or update filter differ: they
	// decide which updates enter a round. Transport settings may change.
	for _, extra := range [][]string{{"--quorum", "1"}, {"--round-timeout", "3s"},
		{"--quorum", "1", "--max-norm-factor", "2"}} {
		args := append(append([]string{"server", "--listen", "127.0.0.1:1", "--insecure", "--checkpoint", ckpt,
			"--resume", "--wait", "1ms"}, extra...), flags...)
		if code, _, errOut := runCLI(args...); code != exitUsage || !strings.Contains(errOut, "another configuration") {
			t.Errorf("resume with %v: exit %d: %s", extra, code, errOut)
		}
	}
	same := append([]string{"server", "--listen", "127.0.0.1:1", "--insecure", "--checkpoint", ckpt, "--resume",
		"--max-unregistered", "5", "--max-payload", "1000000", "--wait", "1ms"}, flags...)
	if _, _, errOut := runCLI(same...); strings.Contains(errOut, "another configuration") {
		t.Errorf("transport flags changed the configuration hash: %s", errOut)
	}
	// A flipped byte is caught by the checksum.
	path := filepath.Join(ckpt, rpc.CheckpointFile)
	b, _ := os.ReadFile(path)
	b[len(b)-5] ^= 1
	os.WriteFile(path, b, 0o600)
	resume := append([]string{"server", "--listen", "127.0.0.1:1", "--insecure", "--checkpoint", ckpt, "--resume"},
		flags...)
	if code, _, errOut := runCLI(resume...); code != exitUsage || !strings.Contains(errOut, "corrupted") {
		t.Errorf("corrupted: exit %d: %s", code, errOut)
	}
	os.WriteFile(path, []byte("hello"), 0o600)
	if code, _, errOut := runCLI(resume...); code != exitUsage || !strings.Contains(errOut, "not a pacpfl checkpoint") {
		t.Errorf("foreign file: exit %d: %s", code, errOut)
	}
	os.Remove(path)
	if code, _, errOut := runCLI(resume...); code != exitUsage || !strings.Contains(errOut, "no checkpoint") {
		t.Errorf("missing: exit %d: %s", code, errOut)
	}
}

// A client started with other data flags than the server's is refused with
// a message naming them, instead of training on other numbers.
func TestClientWithOtherDataRefused(t *testing.T) {
	addr := freeAddr(t)
	var wg sync.WaitGroup
	var serverCode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		serverCode, _, _ = runCLI("server", "--listen", addr, "--insecure", "--wait", "5s", "--clients", "2",
			"--rounds", "1", "--k", "1",
			"--bound-samples", "0", "--bound-trained-samples", "0", "--seed", "5", "--quiet")
	}()
	// The client starts once the server listens: a slow start (under qemu
	// on a loaded machine) must not let the server's --wait run out between
	// two of the client's back-off retries.
	waitListening(t, addr, time.Minute)
	code, _, errOut := runCLI("client", "--server", addr, "--insecure", "--client", "0", "--clients", "2", "--seed",
		"6", "--give-up", "60s")
	wg.Wait()
	if code != exitError || !strings.Contains(errOut, "training data differ") || !strings.Contains(errOut, "--seed") {
		t.Errorf("client: exit %d, stderr %q", code, errOut)
	}
	if serverCode != exitError {
		t.Errorf("server without its clients: exit %d", serverCode)
	}
}

// BNN clients on (fake) Fashion-MNIST over the network: the same report as
// pacpfl train --model bnn.
func TestServerBNNMatchesTrain(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	tmp := t.TempDir()
	common := append([]string{"--model", "bnn", "--data-dir", dir, "--bound-samples", "0", "--seed", "3"},
		tinyBNNFlags...)
	trainJSON, serverJSON := filepath.Join(tmp, "train.json"), filepath.Join(tmp, "server.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, common...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	var rep struct{ Config struct{ Clients int } }
	b, _ := os.ReadFile(trainJSON)
	if err := json.Unmarshal(b, &rep); err != nil || rep.Config.Clients < 1 {
		t.Fatalf("train report: %v %s", err, b)
	}
	n := rep.Config.Clients
	clientFlags := []string{}
	for _, a := range common {
		if a != "--quiet" {
			clientFlags = append(clientFlags, a)
		}
	}
	addr := freeAddr(t)
	var wg sync.WaitGroup
	var code int
	var errOut string
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, _, errOut = runCLI(append(
			[]string{"server", "--listen", addr, "--insecure", "--wait", "60s", "--json", serverJSON}, common...)...)
	}()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"client", "--server", addr, "--insecure", "--client", fmt.Sprint(i), "--give-up",
				"60s"}, clientFlags...)
			if c, _, e := runCLI(args...); c != exitOK {
				t.Errorf("client %d: exit %d: %s", i, c, e)
			}
		}()
	}
	wg.Wait()
	if code != exitOK {
		t.Fatalf("server: exit %d: %s", code, errOut)
	}
	want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, serverJSON)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("server report differs from train's:\n%s\n%s", gb, wb)
	}
}

// The aggregation flags reach the loop: a trimmed mean and a median give
// other particles than the mean on the same run; an update bound below
// every update's norm drops them all and the quorum ends the run, naming
// the bound; bad combinations are refused before listening.
func TestServerAggregationFlags(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--clients", "5", "--new-clients", "1", "--rounds", "3", "--k", "2", "-c", "5", "--batch", "4",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--seed", "3", "--quiet", "--quorum", "5"}
	reports := map[string]string{}
	for _, agg := range [][]string{{"--aggregator", "mean"}, {"--aggregator", "median"},
		{"--aggregator", "trimmed-mean", "--trim", "0.2"}} {
		path := filepath.Join(dir, agg[1]+".json")
		if code, errOut := runFederation(t, 5, "3",
			append(append([]string{"--json", path}, agg...), flags...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", agg, code, errOut)
		}
		b, _ := json.Marshal(readTimelessReport(t, path))
		reports[agg[1]] = string(b)
	}
	if reports["mean"] == reports["median"] || reports["mean"] == reports["trimmed-mean"] ||
		reports["median"] == reports["trimmed-mean"] {
		t.Error("the aggregation flag does not change the run")
	}
	code, errOut := runFederationGiveUp(t, 5, "3", "1s", append([]string{"--max-update-norm", "1e-9"}, flags...)...)
	if code == exitOK || !strings.Contains(errOut, "above the bound 1e-09") {
		t.Errorf("--max-update-norm 1e-9: exit %d: %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--aggregator", "krum", "--byzantine", "1", "--clients", "4"}, "needs at least 2f + 3 = 5 updates"},
		{[]string{"--aggregator", "median", "--trim", "0.1", "--clients", "4"}, "only trimmed-mean trims"},
		{[]string{"--aggregator", "geometric", "--clients", "4"}, "unknown robust aggregation"},
		{[]string{"--max-update-norm", "-1", "--clients", "4"}, "must be ≥ 0"},
	} {
		code, _, errOut := runCLI(append([]string{"server", "--listen", "127.0.0.1:1", "--insecure"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") > 3 {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}

// Sparse GP clients through the CLI: train and a server with its client
// processes write the same report; the report names the inference and why
// the bounds are missing; bad values are refused by name. (A client with
// another M is refused: rpc's TestNetworkedSparseEqualsInProcess.)
func TestSparseTrainEqualsFederation(t *testing.T) {
	dir := t.TempDir()
	sparse := []string{"--gp-inference", "sparse", "--inducing", "6"}
	flags := append(
		[]string{"--clients", "3", "--new-clients", "1", "--rounds", "4", "--k", "2", "-c", "2", "--batch", "4",
			"--seed", "8", "--quiet"}, sparse...)
	trainJSON, fedJSON := filepath.Join(dir, "train.json"), filepath.Join(dir, "fed.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, flags...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	if code, errOut := runFederationClients(t, 3, "8", "60s", sparse,
		append([]string{"--json", fedJSON}, flags...)...); code != exitOK {
		t.Fatalf("server: exit %d: %s", code, errOut)
	}
	want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, fedJSON)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("the federated sparse run's report differs from train's:\n%s\n%s", gb, wb)
	}
	if cfg := want["config"].(map[string]any); cfg["gp_inference"] != "sparse" || cfg["inducing"] != 6.0 {
		t.Errorf("config %v", cfg)
	}
	if na, _ := want["bounds_unavailable"].(string); !strings.Contains(na, "sparse bound with M = 6") {
		t.Errorf("bounds_unavailable %q", na)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gp-inference", "fast"}, `--gp-inference "fast"`},
		{[]string{"--inducing", "-1"}, "--inducing -1"},
	} {
		if code, _, errOut := runCLI(append([]string{"train", "--clients", "3", "--rounds", "1"},
			c.args...)...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
	// More inducing inputs than a client's rows is the caller's setting:
	// a usage error (exit 2), from train and experiment alike.
	for _, args := range [][]string{
		{"train", "--clients", "3", "--rounds", "1"},
		{"experiment", "polynomial", "--seeds", "1", "--rounds", "1", "--new-clients", "2"},
	} {
		args = append(args, "--gp-inference", "sparse", "--inducing", "500", "--quiet")
		if code, _, errOut := runCLI(args...); code != exitUsage ||
			!strings.Contains(errOut, "500 inducing inputs but the client has only") {
			t.Errorf("%v: --inducing above the rows: exit %d: %s", args, code, errOut)
		}
	}
}
