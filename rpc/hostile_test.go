package rpc

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/hostile"
)

// heapPeak samples the process's heap in use every few milliseconds until
// stop is called, which returns the peak above the value at the start.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
					peak.Store(ms.HeapInuse - base)
				}
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// preAuthBound is the README's bound on the memory strangers can hold
// (MaxUnauth connections, each with its pre-authentication bytes and its
// share of gRPC's and TLS's buffers); the attacks below measure against it.
const preAuthBound = 64 << 20

// Attacks that need no token, from 8 addresses at once, while two honest
// clients train: incomplete 1 MiB Register messages on hundreds of streams
// per connection, floods of header-only streams, idle TCP and TLS
// connections. The server's heap stays under preAuthBound, every idle
// connection is closed at the registration deadline, and the run finishes
// with the particles of an undisturbed one.
func TestPreAuthAttacksBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("attacks on a real server: seconds")
	}
	var lg logBuf
	tn := startTCP(t, ServerConfig{Clients: 2, ModelKind: "affine", Dim: testDim, RegisterTimeout: 2 * time.Second,
		Log: lg.logf}, true)
	stop := heapPeak()
	ips := hostile.LoopbackIPs(2, 9)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent, refusedDial int64
	type idleConn interface {
		ClosedWithin(time.Duration) bool
		ClosedAfter() (time.Duration, bool)
	}
	var idles []idleConn
	for i := range 96 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := hostile.Dialer{LocalIP: ips[i%len(ips)], Timeout: 3 * time.Second, Settle: 50 * time.Millisecond}
			switch i % 4 {
			case 0, 1: // incomplete 1 MiB messages on many streams
				c, err := d.Dial(tn.addr, tn.tls)
				if err != nil {
					mu.Lock()
					refusedDial++
					mu.Unlock()
					return
				}
				defer c.Close()
				r := hostile.PartialMessages(c, 200, 1<<20)
				mu.Lock()
				sent += r.Sent
				mu.Unlock()
			case 2: // header-only streams
				c, err := d.Dial(tn.addr, tn.tls)
				if err != nil {
					mu.Lock()
					refusedDial++
					mu.Unlock()
					return
				}
				defer c.Close()
				hostile.HeaderFlood(c, 5000)
			case 3: // idle, bare TCP or TLS without a stream
				var c idleConn
				var err error
				if i%8 == 3 {
					c, err = d.IdleTCP(tn.addr)
				} else {
					c, err = d.IdleTLS(tn.addr, tn.tls)
				}
				if err == nil {
					mu.Lock()
					idles = append(idles, c)
					mu.Unlock()
				}
			}
		}()
	}
	// Two honest clients train meanwhile (they retry while the caps are
	// full) and end with the particles of an undisturbed run.
	cfgs := []ClientConfig{affineConfig(0, &affine{w: 1}), affineConfig(1, &affine{w: -0.5})}
	errs := make([]error, 2)
	var cwg sync.WaitGroup
	for i := range cfgs {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			errs[i] = Serve(context.Background(), tn.dial(t), cfgs[i])
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := fl.Config{K: 2, Rounds: 20, ClientsPerRound: 2, LR: 0.1, Tau: 0.5, Seed: 4, Workers: 2}
	got := runFL(t, cfg, tn.co.Clients())
	wg.Wait()
	// The registration deadline is 2 s from accept; the grace covers a
	// loaded machine, the race detector's slowdown of the server's
	// goroutines and emulation (qemu in CI's arm64 step), where closes 4 s
	// late were seen.
	grace := 15 * time.Second
	for _, c := range idles {
		if !c.ClosedWithin(grace) {
			t.Errorf("an idle connection was still open %v after the attack (registration deadline 2 s)", grace)
		} else if after, _ := c.ClosedAfter(); after > 4*time.Second {
			t.Logf("an idle connection was closed %v after its dial (registration deadline 2 s)",
				after.Round(time.Millisecond))
		}
	}
	peak := stop()
	tn.co.Finish()
	cwg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("honest client %d: %v", i, err)
		}
	}
	cfg.Workers = 0
	want := runFL(t, cfg, []fl.Client{&affine{w: 1}, &affine{w: -0.5}})
	sameBits(t, "particles", got.Particles, want.Particles)
	t.Logf("heap peak above the start %.1f MiB during the attacks (bound %d MiB); %.1f MiB of DATA sent by "+
		"attackers; %d dials refused; %d idle connections",
		float64(peak)/(1<<20), preAuthBound>>20, float64(sent)/(1<<20), refusedDial, len(idles))
	bound := uint64(preAuthBound)
	if raceEnabled {
		bound *= 4 // the race detector's shadow memory and larger allocations
	}
	if peak > bound {
		t.Errorf("heap grew by %.1f MiB under attack, above the bound of %d MiB", float64(peak)/(1<<20), bound>>20)
	}
	lg.mu.Lock()
	n := len(lg.lines)
	lg.mu.Unlock()
	if n > 200 {
		t.Errorf("%d log lines for the attacks: refusals are not rate-limited", n)
	}
}

// failAfter is affine for its first n updates and fails after.
type failAfter struct {
	affine
	n, calls int
}

func (f *failAfter) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	if f.calls++; f.calls > f.n {
		return 0, errors.New("left out")
	}
	return f.affine.Update(p, k, d, b, rng, g)
}

// An authenticated client that answers honestly for two rounds and then
// misbehaves in one way every round (hostile.Modes: wrong sequence
// number, wrong shape, an announcement above the limit, a bad checksum,
// trickling, silence, a gradient ×1e150, of 1e300 or NaN, a mean ln Z^C of
// NaN, Inf or 1e300, a megabyte of log-forging error text). With a quorum
// every run finishes; it equals, to the bit (particles and LML history),
// the run in which that client fails after its two honest rounds; a
// client refused keeps getting work; and the server's log holds no
// control character and no forged line.
func TestMisbehavingClientEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("one small federation per mode")
	}
	const rounds, honest = 6, 2
	ws := []float64{1, -0.5, 2, 3}
	for _, mode := range hostile.Modes {
		t.Run(mode.String(), func(t *testing.T) {
			var lg logBuf
			tn := startTCP(t,
				ServerConfig{Clients: 4, ModelKind: "affine", Dim: testDim, RoundTimeout: 400 * time.Millisecond,
					MaxPayload: 1 << 10, Log: lg.logf}, true)
			cfgs := []ClientConfig{affineConfig(0, &affine{w: ws[0]}), affineConfig(1, &affine{w: ws[1]}),
				affineConfig(2, &affine{w: ws[2]})}
			errs := make([]error, 3)
			var cwg sync.WaitGroup
			for i := range cfgs {
				cwg.Add(1)
				go func() {
					defer cwg.Done()
					errs[i] = Serve(context.Background(), tn.dial(t), cfgs[i])
				}()
			}
			bad := &affine{w: ws[3]}
			conn, err := hostile.DialGRPC(tn.addr, tn.tls)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var rep *hostile.ClientReport
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				rep, _ = hostile.RunClient(context.Background(), conn,
					hostile.ClientConfig{ID: 3, ModelKind: "affine", Dim: testDim, DataSize: 1,
						HonestRounds: honest, Mode: mode, Reconnects: 100, ReconnectDelay: 10 * time.Millisecond,
						TrickleDelay: 200 * time.Millisecond,
						Compute: func(p []float64, k, dim, batch int, seed, stream uint64,
							g []float64) (float64, error) {
							return bad.Update(p, k, dim, batch, fl.ClientStream(seed, stream), g)
						}})
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := tn.co.WaitReady(ctx); err != nil {
				t.Fatal(err)
			}
			cfg := fl.Config{K: 2, Rounds: rounds, ClientsPerRound: 4, LR: 0.1, Tau: 0.5, Seed: 5, Quorum: 3,
				MaxNormFactor: 10, Workers: 4}
			got := runFL(t, cfg, tn.co.Clients())
			tn.co.Finish()
			cwg.Wait()
			cfg.Workers = 0
			want := runFL(t, cfg, []fl.Client{&affine{w: ws[0]}, &affine{w: ws[1]}, &affine{w: ws[2]},
				&failAfter{affine: affine{w: ws[3]}, n: honest}})
			sameBits(t, "particles", got.Particles, want.Particles)
			sameBits(t, "mean LML", got.MeanLML, want.MeanLML)
			for i, err := range errs {
				if err != nil {
					t.Errorf("honest client %d: %v", i, err)
				}
			}
			if rep == nil || rep.Ended != "done" {
				t.Errorf("the misbehaving client did not stay until Done: %+v", rep)
			} else if works := len(rep.Rounds); works < rounds-1 {
				t.Errorf("the misbehaving client got %d works in %d rounds: refused for good", works, rounds)
			}
			lg.mu.Lock()
			defer lg.mu.Unlock()
			for _, l := range lg.lines {
				if hostile.HasControl([]byte(l)) || strings.Contains(l, "\n") || len(l) > 4*MaxLoggedText {
					t.Errorf("log line of %d bytes with a control character: %.200q", len(l), l)
				}
			}
		})
	}
}
