package data

import (
	"runtime"
	"slices"
	"testing"
)

func TestIIDSplit(t *testing.T) {
	im := synthImages(uniform(10, 70))
	ds, err := IID(im, IIDConfig{Clients: 10, Train: 54, Test: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Existing) != 10 || len(ds.New) != 0 || ds.Classes != 10 || ds.D != 4 {
		t.Fatalf("%d clients, %d new, %d classes, D = %d", len(ds.Existing), len(ds.New), ds.Classes, ds.D)
	}
	ex, _ := clientSources(t, im, ds) // also: every image used at most once
	counts := make([]int, 10)
	for _, c := range ex {
		if len(c[0]) != 54 || len(c[1]) != 6 {
			t.Fatalf("client with %d + %d images, want 54 + 6", len(c[0]), len(c[1]))
		}
		for _, i := range c[0] {
			counts[im.Labels[i]]++
		}
	}
	// A label-blind draw: every class shows up, none dominates.
	for l, n := range counts {
		if n < 20 || n > 90 {
			t.Errorf("label %d: %d of 540 training images", l, n)
		}
	}
	if _, err := IID(im, IIDConfig{Clients: 12, Train: 54, Test: 6}); err == nil {
		t.Error("720 images from a pool of 700 accepted")
	}
	for _, c := range []IIDConfig{{Clients: 0, Train: 1}, {Clients: 1, Train: 0}, {Clients: 1, Train: 1, Test: -1}} {
		if _, err := IID(im, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestShardsSplit(t *testing.T) {
	im := synthImages(uniform(10, 70))
	ds, err := Shards(im, ShardsConfig{Clients: 10, ShardSize: 30, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := clientSources(t, im, ds)
	if len(ex) != 10 {
		t.Fatalf("%d clients", len(ex))
	}
	for k, c := range ex {
		if len(c[0]) != 54 || len(c[1]) != 6 {
			t.Fatalf("client %d: %d + %d images, want 54 + 6", k, len(c[0]), len(c[1]))
		}
		var labels []uint8
		for _, i := range append(slices.Clone(c[0]), c[1]...) {
			if !slices.Contains(labels, im.Labels[i]) {
				labels = append(labels, im.Labels[i])
			}
		}
		// Two label-sorted shards: at most 2 labels each.
		if len(labels) > 4 {
			t.Errorf("client %d holds %d labels %v", k, len(labels), labels)
		}
	}
	for _, c := range []ShardsConfig{{Clients: 0}, {Clients: 1, TestFraction: 1}, {Clients: 3, ShardSize: 200},
		{Clients: 1, ShardSize: 1, ShardsPerClient: 1}} {
		if _, err := Shards(im, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestIIDShardsDeterministic(t *testing.T) {
	im := synthImages(uniform(10, 80))
	for name, split := range map[string]func(uint64) (*Dataset, error){
		"iid": func(s uint64) (*Dataset, error) {
			return IID(im, IIDConfig{Clients: 7, Train: 50, Test: 10, Seed: s})
		},
		"shards": func(s uint64) (*Dataset, error) {
			return Shards(im, ShardsConfig{Clients: 7, ShardSize: 40, Seed: s})
		},
	} {
		prev := runtime.GOMAXPROCS(1)
		a, err1 := split(7)
		runtime.GOMAXPROCS(2)
		b, err2 := split(7)
		runtime.GOMAXPROCS(prev)
		c, err3 := split(8)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", name, err1, err2, err3)
		}
		if !equalDatasets(a, b) || equalDatasets(a, c) {
			t.Errorf("%s: not a function of the seed", name)
		}
	}
}
