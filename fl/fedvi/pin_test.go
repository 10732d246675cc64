package fedvi

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"testing"

	"github.com/pacpfl/pacpfl/asm"
)

// pinLevel runs a pinned test at asm's generic level on amd64, whose bits
// do not depend on the CPU (SIMD levels and arm64's fused a*b+c round
// differently).
func pinLevel(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("pinned bits are amd64's")
	}
	if err := asm.Configure("generic"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = asm.Configure("") })
}

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
	pinLevel(t)
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name   string
		rounds int
		mom    float64
		want   string
	}{
		{"momentum", 5, 0.5, "4aab772126fa9765"},
		{"plain", 4, 0, "24d805dc09265bf0"},
		{"no rounds", 0, 0.5, "1e2438705695434c"},
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
