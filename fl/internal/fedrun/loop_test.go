package fedrun

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

// Uniform draws what rand.Perm draws on its stream, round after round, in
// its one buffer.
func TestUniformIsPerm(t *testing.T) {
	u := NewUniform(7, 3, 5, 9)
	for r := 0; r < 4; r++ {
		got, _ := u.Select(r)
		want := rand.New(rand.NewPCG(5, data.StreamID(9, 0x73656c, uint64(r)))).Perm(7)[:3]
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %v, rand.Perm %v", r, got, want)
		}
	}
	if a := testing.AllocsPerRun(10, func() { _, _ = u.Select(3) }); a != 0 {
		t.Errorf("%v allocations per selection", a)
	}
}

// Prefix draws c distinct clients, all n when c is 0.
func TestPrefixDistinct(t *testing.T) {
	for _, c := range []int{0, 1, 4, 6} {
		p := NewPrefix(6, c, 1, 2)
		for r := 0; r < 20; r++ {
			got, _ := p.Select(r)
			want := c
			if c == 0 {
				want = 6
			}
			s := slices.Clone(got)
			slices.Sort(s)
			if len(got) != want || len(slices.Compact(s)) != want || s[0] < 0 || s[len(s)-1] >= 6 {
				t.Fatalf("c = %d, round %d: %v", c, r, got)
			}
		}
	}
}

// A loop started at round Start runs the rounds a whole run would from
// there, on the same streams; Ctx ends it between rounds with its error;
// Local's errors reach Finish in their slots.
func TestLoopStartCtxErrors(t *testing.T) {
	var draws [][]uint64
	mk := func(start, rounds int, ctx context.Context) *Loop {
		draws = draws[:0]
		l := &Loop{Clients: 5, Slots: 2, Start: start, Rounds: rounds, Seed: 3, Tag: 4, Workers: 2, Ctx: ctx,
			Select: NewPrefix(5, 2, 3, 5).Select}
		got := make([]uint64, 2)
		l.Local = func(slot, client, round int, rng *rand.Rand) error {
			got[slot] = rng.Uint64()
			if client == 4 {
				return errors.New("four")
			}
			return nil
		}
		l.Finish = func(round int, chosen []int, errs []error) error {
			for s, err := range errs {
				if (err != nil) != (chosen[s] == 4) {
					t.Errorf("round %d, client %d: error %v", round, chosen[s], err)
				}
			}
			draws = append(draws, slices.Clone(got))
			return nil
		}
		return l
	}
	if err := mk(0, 6, nil).Run(); err != nil {
		t.Fatal(err)
	}
	whole := slices.Clone(draws)
	if err := mk(4, 6, nil).Run(); err != nil {
		t.Fatal(err)
	}
	if len(draws) != 2 || !slices.Equal(draws[0], whole[4]) || !slices.Equal(draws[1], whole[5]) {
		t.Fatalf("resumed rounds %v, whole run's %v", draws, whole[4:])
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := mk(0, 6, ctx)
	finish := l.Finish
	l.Finish = func(round int, chosen []int, errs []error) error {
		if round == 2 {
			cancel()
		}
		return finish(round, chosen, errs)
	}
	if err := l.Run(); !errors.Is(err, context.Canceled) || len(draws) != 3 {
		t.Fatalf("cancelled after round 3: %v after %d rounds", err, len(draws))
	}
	if err := (&Loop{Clients: 2, Slots: 3}).Run(); err == nil {
		t.Error("3 slots for 2 clients accepted")
	}
}
