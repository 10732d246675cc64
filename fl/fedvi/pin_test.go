package fedvi

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// digest is a fingerprint of values printed with %v: Go prints a float64
// in the shortest form that reads back to the same bits, so equal digests
// mean equal bits.
func digest(vs ...any) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(vs...))))[:16]
}

// TestFedAvgPinned pins the exact bits of small seeded runs of FedAvg and
// FedAvg+FT on the CNN: θ, every evaluation of both groups and the means,
// with the server's momentum and without rounds.
func TestFedAvgPinned(t *testing.T) {
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name   string
		rounds int
		mom    float64
		want   string
	}{
		{"momentum", 5, 0.5, "c7ef9445f3b27e53"},
		{"plain", 4, 0, "a8035d7fceff81b2"},
		{"no rounds", 0, 0.5, "00868cbdffb7bd7a"},
	} {
		o := tinyOptions()
		o.Rounds, o.Momentum, o.EvalLast = c.rounds, c.mom, 2
		p, f, err := TrainFedAvg(ds, o, FineTune{Epochs: 1, Batch: 16, LR: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		got := digest(p.Theta, p.History, p.LastExisting, p.LastNew, f.Theta, f.History, f.LastExisting, f.LastNew)
		if got != c.want {
			t.Errorf("%s: digest %s, pinned %s", c.name, got, c.want)
		}
	}
}
