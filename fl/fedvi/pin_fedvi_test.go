package fedvi

import (
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
)

// TestTrainPinned pins the exact bits of small seeded FedVI runs: θ, the
// weighted accuracies of every evaluation, the final evaluation of both
// groups and the means, with sampled and with all clients, with P's
// outputs pooled, and without rounds.
func TestTrainPinned(t *testing.T) {
	asmtest.PinGeneric(t)
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name     string
		rounds   int
		perRound int
		pool     bool
		want     string
	}{
		{"sampled", 4, 3, false, "a7c7aaf6921ff786"},
		{"all", 3, 0, false, "f6842b6f8d8a661d"},
		{"pooled outputs", 3, 2, true, "362664fbb8dc6fee"},
		{"no rounds", 0, 3, false, "1deb609370bd86e1"},
	} {
		o := tinyOptions()
		o.Rounds, o.ClientsPerRound, o.EvalLast, o.EvalDraws = c.rounds, c.perRound, 2, 3
		o.Arch.PoolOutputs = c.pool
		r, err := Train(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := asmtest.Digest(pinned(r)...); got != c.want {
			t.Errorf("%s: digest %s, pinned %s", c.name, got, c.want)
		}
	}
}
