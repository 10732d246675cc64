package methods

import (
	"context"
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// Every Networked method run with the clients its Client builds — one per
// client, kept across rounds as a client process keeps it — gives the
// in-process result to the bit: Client's options are Run's.
func TestNetworkedRemoteIsTheRun(t *testing.T) {
	ds := tinyImages(t, 3)
	const seed = 21
	obs := harness.ObserverFunc(func(harness.Event) {})
	var names []string
	for _, m := range tinyClassification(t) {
		nm, ok := m.(Networked)
		if !ok {
			continue
		}
		names = append(names, nm.Name())
		want, err := nm.Run(context.Background(), ds, seed, obs)
		if err != nil {
			t.Fatal(err)
		}
		var ex, nw []fl.RoundClient
		for g, group := range [][]data.ClientData{ds.Existing, ds.New} {
			if g == GroupNew && nm.Traits().NoNewClients {
				if _, err := nm.Client(&group[0], ds.Classes, seed, g, 0); err == nil {
					t.Errorf("%s: a new client built", nm.Name())
				}
				continue
			}
			for i := range group {
				c, err := nm.Client(&group[i], ds.Classes, seed, g, i)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := c.(fl.StatefulClient); ok != nm.Traits().Stateful && g == GroupExisting {
					t.Errorf("%s: Stateful is %v, its client %T", nm.Name(), nm.Traits().Stateful, c)
				}
				if g == GroupExisting {
					ex = append(ex, c)
				} else {
					nw = append(nw, c)
				}
			}
		}
		if d, err := nm.Dim(ds.Classes); err != nil || d < 1 {
			t.Fatalf("%s: dim %d, %v", nm.Name(), d, err)
		}
		rm := nm.Remote(Remote{Clients: func(int, int) ([]fl.RoundClient, []fl.RoundClient, error) {
			return ex, nw, nil
		}})
		got, err := rm.Run(context.Background(), ds, seed, obs)
		if err != nil {
			t.Fatalf("%s: %v", nm.Name(), err)
		}
		if a, b := classDigest(got), classDigest(want); a != b {
			t.Errorf("%s: remote clients give %s, in process %s", nm.Name(), a, b)
		}
	}
	if len(names) != len(NetworkedMethods) {
		t.Errorf("networked methods %v, NetworkedMethods %v", names, NetworkedMethods)
	}
}

// classDigest is the figures of a classification result.
func classDigest(r *fl.MethodResult) string {
	var vs []any
	for _, g := range []*fl.ClassGroupMetrics{r.ExistingClass, r.GlobalClass, r.NewClass} {
		if g != nil {
			vs = append(vs, *g)
		}
	}
	if r.Best != nil {
		vs = append(vs, r.Best.From, r.Best.To)
		for _, g := range []*float64{r.Best.Existing, r.Best.Global} {
			if g != nil {
				vs = append(vs, *g)
			}
		}
	}
	return asmtest.Digest(vs...)
}
