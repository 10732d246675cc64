package hostile

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The soak test (issue 33): a real pacpfl server (TLS, tokens, --quorum)
// and 10 honest pacpfl client processes train a GP run sized to last
// about PACPFL_SOAK, once undisturbed and once under a swarm of 200
// hostile connections from 127.0.0.2–127.0.0.9 cycling through the raw
// attacks; it prints the server's peak RSS, rounds completed, wall time
// and the errors of both runs, and fails if the server dies or the
// attacked run does not finish.
//
//	PACPFL_SOAK=30s go test -v -run Soak ./internal/hostile/
//	PACPFL_SOAK=10m go test -v -timeout 60m -run Soak ./internal/hostile/
//
// PACPFL_SOAK_BIN=path uses a pacpfl binary built elsewhere (another
// revision's server) instead of building the module's.

const (
	soakClients = 10
	soakQuorum  = 8
	soakAttack  = 200
)

func TestSoak(t *testing.T) {
	spec := os.Getenv("PACPFL_SOAK")
	if spec == "" {
		t.Skip("set PACPFL_SOAK to a duration (30s, 10m) to run the soak test")
	}
	dur, err := time.ParseDuration(spec)
	if err != nil || dur < time.Second {
		t.Fatalf("PACPFL_SOAK=%q: want a duration of at least 1s", spec)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the soak test reads /proc and binds 127.0.0.2–9 (Linux)")
	}
	// The probe, the undisturbed run, the attacked run (at most 3× the
	// undisturbed one and a minute), the starts and stops.
	need := 5*dur + 3*time.Minute
	if dl, ok := t.Deadline(); ok && time.Until(dl) < need {
		t.Fatalf("PACPFL_SOAK=%v needs about %v; run with -timeout %v", dur, need.Round(time.Minute),
			(need + 5*time.Minute).Round(time.Minute))
	}
	dir := t.TempDir()
	bin := os.Getenv("PACPFL_SOAK_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "pacpfl")
		build := exec.Command("go", "build", "-o", bin, "./cmd/pacpfl")
		build.Dir = moduleRoot(t)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/pacpfl: %v\n%s", err, out)
		}
	}
	certs := filepath.Join(dir, "certs")
	if out, err := exec.Command(bin, "certs", "--out", certs, "--clients",
		strconv.Itoa(soakClients)).CombinedOutput(); err != nil {
		t.Fatalf("pacpfl certs: %v\n%s", err, out)
	}
	tlsConf := soakTLS(t, filepath.Join(certs, "ca.pem"))
	s := &soak{t: t, bin: bin, dir: dir, certs: certs, tls: tlsConf}

	// Size the run: a short probe gives the time per round.
	const probeRounds = 300
	probe := s.run("probe", probeRounds, false, 2*time.Minute)
	if !probe.finished() || probe.TrainSeconds <= 0 {
		t.Fatalf("the probe run failed: %s", probe)
	}
	rounds := max(probeRounds, int(dur.Seconds()*probeRounds/probe.TrainSeconds))
	t.Logf("probe: %d rounds in %.2f s of training: %d rounds for %v", probeRounds, probe.TrainSeconds, rounds, dur)

	base := s.run("undisturbed", rounds, false, 3*dur+time.Minute)
	t.Logf("undisturbed: %s", base)
	if !base.finished() {
		t.Fatalf("the undisturbed run failed: %s", base)
	}
	limit := 3*base.Wall + time.Minute
	att := s.run("attacked", rounds, true, limit)
	t.Logf("attacked:    %s", att)
	t.Logf("swarm: %s", att.Swarm)
	t.Logf("before/after: peak RSS %.1f → %.1f MB (×%.1f), VmHWM %.1f → %.1f MB, open fds %d → %d, wall %.1f → %.1f "+
		"s (×%.2f), rounds %d → %d of %d",
		mb(base.RSS.PeakRSS), mb(att.RSS.PeakRSS), float64(att.RSS.PeakRSS)/float64(max(1, base.RSS.PeakRSS)),
		mb(base.RSS.HWM), mb(att.RSS.HWM), base.PeakFDs, att.PeakFDs,
		base.Wall.Seconds(), att.Wall.Seconds(), att.Wall.Seconds()/base.Wall.Seconds(), base.Rounds, att.Rounds,
		rounds)
	t.Logf("round time: undisturbed %.2f ms, attacked %.2f ms (mean over the training)",
		1e3*base.TrainSeconds/float64(max(1, base.Rounds)), 1e3*att.TrainSeconds/float64(max(1, att.Rounds)))
	// The attackers hold no token: the run must not notice them.
	same, err := sameReports(filepath.Join(s.dir, "undisturbed.json"), filepath.Join(s.dir, "attacked.json"))
	t.Logf("attacked report equals the undisturbed one (timings aside): %v", same)
	if err != nil || !same {
		t.Errorf("the attacked run's report differs from the undisturbed one: %v", err)
	}
	switch {
	case att.TimedOut:
		t.Errorf("the attacked run did not finish within %v (%d of %d rounds)", limit.Round(time.Second), att.Rounds,
			rounds)
	case att.ExitErr != nil:
		t.Errorf("the attacked server failed or died: %v", att.ExitErr)
	case att.Rounds != rounds:
		t.Errorf("the attacked run completed %d of %d rounds", att.Rounds, rounds)
	}
}

func mb(b int64) float64 { return float64(b) / 1e6 }

// sameReports compares two --json reports but for their timings.
func sameReports(a, b string) (bool, error) {
	var out [2]string
	for i, p := range []string{a, b} {
		raw, err := os.ReadFile(p)
		if err != nil {
			return false, err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return false, fmt.Errorf("%s: %w", p, err)
		}
		delete(m, "train_seconds")
		delete(m, "total_seconds")
		j, _ := json.Marshal(m)
		out[i] = string(j)
	}
	return out[0] == out[1], nil
}

// moduleRoot is the directory of the module's go.mod above the test's.
func moduleRoot(t *testing.T) string {
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			t.Fatal("no go.mod above the test's directory")
		}
		d = up
	}
}

func soakTLS(t *testing.T, caFile string) *tls.Config {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no CA certificate in ca.pem")
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}
}

type soak struct {
	t     *testing.T
	bin   string
	dir   string
	certs string
	tls   *tls.Config
}

// soakRun is what one federation run did.
type soakRun struct {
	Name         string
	Rounds       int // completed: the report's, or the last progress line's
	Total        int
	Wall         time.Duration // server start to exit
	JoinWait     time.Duration // from the server's listening to all clients joined (log timestamps)
	ExitWait     time.Duration // from the report written (its mtime) to the server's exit
	TrainSeconds float64       // the report's
	TimedOut     bool
	ExitErr      error // the server's exit status
	RSS          RSSReport
	PeakFDs      int
	ClientFailed int            // client processes that exited non-zero
	Retries      int            // "retrying" lines in the clients' logs
	ClientErrors []string       // their last error lines
	ServerLog    LogStats       // the server's log
	Events       map[string]int // server log lines by event
	Swarm        SwarmReport
}

func (r *soakRun) finished() bool { return !r.TimedOut && r.ExitErr == nil && r.Rounds == r.Total }

func (r *soakRun) String() string {
	s := fmt.Sprintf("%d/%d rounds, wall %.1f s (all clients joined after %.1f s, training %.1f s, exit %.1f s after "+
		"the report), server %s, %s, peak open fds %d; clients: %d failed, %d retries; server log: %d lines (%d with "+
		"control characters, longest %d bytes), events %v",
		r.Rounds, r.Total, r.Wall.Seconds(), r.JoinWait.Seconds(), r.TrainSeconds, r.ExitWait.Seconds(), exitText(r),
		r.RSS, r.PeakFDs, r.ClientFailed, r.Retries,
		r.ServerLog.Lines, r.ServerLog.ControlLines, r.ServerLog.LongestLine, r.Events)
	if len(r.ClientErrors) > 0 {
		s += fmt.Sprintf("; client errors %q", r.ClientErrors)
	}
	return s
}

func exitText(r *soakRun) string {
	switch {
	case r.TimedOut:
		return "killed after the time limit"
	case r.ExitErr != nil:
		return "failed: " + r.ExitErr.Error()
	}
	return "exited 0"
}

var (
	progressLine = regexp.MustCompile(`round (\d+)/(\d+)`)
	logTime      = regexp.MustCompile(`^pacpfl server: (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}) `)
)

// serverEvents are the server's log lines counted by the soak test.
var serverEvents = []string{"refused", "rejected", "left out", "late", "disconnected", "rejoined", "failed"}

// run trains rounds rounds with the server and 10 clients, with the
// attack swarm if attack, and kills everything after limit.
func (s *soak) run(name string, rounds int, attack bool, limit time.Duration) *soakRun {
	t := s.t
	r := &soakRun{Name: name, Total: rounds}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	data := []string{"--clients", strconv.Itoa(soakClients), "--seed", "11"}
	flags := append([]string{"server", "--listen", addr, "--tls-cert", filepath.Join(s.certs, "server.pem"),
		"--tls-key", filepath.Join(s.certs, "server.key"),
		"--tokens", s.certs, "--quorum", strconv.Itoa(soakQuorum), "--round-timeout", "10s", "--wait", "60s",
		"--new-clients", "2", "--rounds", strconv.Itoa(rounds), "--k", "2", "-c", strconv.Itoa(soakClients), "--batch",
		"5",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--json", filepath.Join(s.dir, name+".json")}, data...)
	serverLog := filepath.Join(s.dir, name+"-server.log")
	srv := s.start(flags, filepath.Join(s.dir, name+"-server.out"), serverLog)
	start := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	rss := SampleRSS(srv.Process.Pid, 100*time.Millisecond)
	fds := sampleFDs(srv.Process.Pid, 500*time.Millisecond)
	var swarm *Swarm
	if attack {
		// The swarm starts as soon as the server listens, before the
		// honest clients join.
		for i := 0; i < 300; i++ {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		swarm = StartSwarm(SwarmConfig{Addr: addr, TLS: s.tls, Conns: soakAttack, LocalIPs: LoopbackIPs(2, 9)})
	}
	clients := make([]*exec.Cmd, soakClients)
	for i := range clients {
		args := append([]string{"client", "--server", addr, "--ca", filepath.Join(s.certs, "ca.pem"),
			"--token-file", filepath.Join(s.certs, fmt.Sprintf("client-%d.token", i)), "--client", strconv.Itoa(i),
			"--give-up", "60s"}, data...)
		clients[i] = s.start(args, os.DevNull, filepath.Join(s.dir, fmt.Sprintf("%s-client%d.log", name, i)))
	}
	timer := time.NewTimer(limit)
	select {
	case r.ExitErr = <-exited:
	case <-timer.C:
		r.TimedOut = true
		srv.Process.Kill()
		<-exited
	}
	timer.Stop()
	end := time.Now()
	r.Wall = end.Sub(start)
	if fi, err := os.Stat(filepath.Join(s.dir, name+".json")); err == nil {
		r.ExitWait = end.Sub(fi.ModTime())
	}
	if swarm != nil {
		r.Swarm = swarm.Stop()
	}
	r.RSS = rss.Stop()
	r.PeakFDs = fds.stop()
	// The clients end with the server's Done (or give up): a grace
	// period, then they are killed.
	grace := time.After(30 * time.Second)
	for i, c := range clients {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-grace:
			c.Process.Kill()
			err = <-done
		}
		if err != nil {
			r.ClientFailed++
		}
		log, _ := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("%s-client%d.log", name, i)))
		r.Retries += bytes.Count(log, []byte("retrying"))
		if err != nil {
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			r.ClientErrors = append(r.ClientErrors, fmt.Sprintf("client %d: %v: %s", i, err, lines[len(lines)-1]))
		}
	}
	slog, _ := os.ReadFile(serverLog)
	r.ServerLog = AnalyzeLog(slog, "", "")
	r.Events = map[string]int{}
	var listening time.Time
	for _, line := range strings.Split(string(slog), "\n") {
		if m := logTime.FindStringSubmatch(line); m != nil {
			ts, err := time.Parse("2006/01/02 15:04:05.000000", m[1])
			switch {
			case err != nil:
			case strings.Contains(line, "listening on"):
				listening = ts
			case strings.Contains(line, "clients joined: training") && !listening.IsZero():
				r.JoinWait = ts.Sub(listening)
			}
		}
		for _, e := range serverEvents {
			if strings.Contains(line, e) {
				r.Events[e]++
			}
		}
		if m := progressLine.FindStringSubmatch(line); m != nil {
			r.Rounds, _ = strconv.Atoi(m[1])
		}
	}
	var rep struct {
		TrainSeconds float64           `json:"train_seconds"`
		LMLHistory   []json.RawMessage `json:"lml_history"`
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, name+".json")); err == nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Errorf("%s: the server's report: %v", name, err)
		}
		r.Rounds, r.TrainSeconds = len(rep.LMLHistory), rep.TrainSeconds
	}
	if !r.finished() {
		t.Logf("%s: the last lines of the server's log:\n%s", name, tail(slog, 15))
	}
	return r
}

// start starts the pacpfl binary with args, stdout and stderr to files;
// the process is killed when the test ends.
func (s *soak) start(args []string, stdout, stderr string) *exec.Cmd {
	cmd := exec.Command(s.bin, args...)
	var err error
	if cmd.Stdout, err = os.Create(stdout); err != nil {
		s.t.Fatal(err)
	}
	if cmd.Stderr, err = os.Create(stderr); err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return cmd
}

// tail is the last n lines of b, each cut to 300 bytes (with control
// characters escaped: the log may carry an attacker's).
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		lines[i] = strconv.QuoteToASCII(l)
	}
	return strings.Join(lines, "\n")
}

// fdSampler counts a process's open file descriptors at an interval.
type fdSampler struct {
	stopc chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	peak  int
}

func sampleFDs(pid int, interval time.Duration) *fdSampler {
	f := &fdSampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
				f.mu.Lock()
				f.peak = max(f.peak, len(ents))
				f.mu.Unlock()
			} else if errors.Is(err, syscall.ENOENT) {
				return
			}
			select {
			case <-f.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return f
}

func (f *fdSampler) stop() int {
	close(f.stopc)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}
