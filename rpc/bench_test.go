package rpc

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/fl"
)

type echo struct{}

func (echo) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	copy(g, p)
	return 0, nil
}

// BenchmarkTransfer25MB: k = 3 particles of dφ = 2²⁰ to one client and back
// over loopback TCP, plaintext and TLS.
func BenchmarkTransfer25MB(b *testing.B) {
	for _, useTLS := range []bool{false, true} {
		name := "plaintext"
		if useTLS {
			name = "tls"
		}
		b.Run(name, func(b *testing.B) { benchTransfer(b, useTLS) })
	}
}

func benchTransfer(b *testing.B, useTLS bool) {
	const k, dim = 3, 1 << 20
	lb, err := NewLoopback(ServerConfig{Clients: 1, ModelKind: "echo", Dim: dim},
		[]ClientConfig{{ModelKind: "echo", Dim: dim, GiveUp: time.Minute,
			New: func(string) (fl.Client, error) { return echo{}, nil }}}, useTLS)
	if err != nil {
		b.Fatal(err)
	}
	defer lb.Close()
	p, g := make([]float64, k*dim), make([]float64, k*dim)
	px := lb.Co.Clients()[0].(fl.SeededClient)
	b.SetBytes(2 * 8 * k * dim)
	for b.Loop() {
		if _, err := px.UpdateSeeded(fl.Work{Particles: p, K: k, Dim: dim}, g); err != nil {
			b.Fatal(err)
		}
	}
}
