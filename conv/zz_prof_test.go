package conv

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestZZLayerTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	net, _ := NewBCNN(BCNNConfig{})
	for _, p := range net.Params() {
		fill(rng, p.Value)
	}
	x, labels := batch(rng, 64, 1, 28, 28, 10)
	fwd := make([]time.Duration, len(net.Layers))
	bwd := make([]time.Duration, len(net.Layers))
	for it := 0; it < 30; it++ {
		in := x
		outs := make([]*Tensor, len(net.Layers))
		for i, l := range net.Layers {
			s := time.Now()
			in, _ = l.Forward(in)
			d := time.Since(s)
			if it == 0 || d < fwd[i] {
				fwd[i] = d
			}
			outs[i] = in
		}
		net.Loss.Forward(in, labels)
		dy, _ := net.Loss.Backward()
		for i := len(net.Layers) - 1; i >= 0 && dy != nil; i-- {
			s := time.Now()
			dy, _ = net.Layers[i].Backward(dy)
			d := time.Since(s)
			if it == 0 || d < bwd[i] {
				bwd[i] = d
			}
		}
	}
	for i, l := range net.Layers {
		fmt.Printf("%-10T fwd %8v bwd %8v\n", l, fwd[i], bwd[i])
	}
}
