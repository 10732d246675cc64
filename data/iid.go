package data

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// IIDConfig configures the i.i.d. split of an image pool (GenFL's FL-SOB
// setting, docs/math.md §7: 100 users with 540 training images and 10 % per-user
// test each).
type IIDConfig struct {
	Clients     int // users K ≥ 1
	Train, Test int // images per user for training (≥ 1) and test (≥ 0)
	Seed        uint64
}

// IID deals Clients·(Train+Test) images of the pool, chosen by one
// uniformly random permutation (stream (Seed, "iid")), to the clients in
// blocks: client k gets the next Train training and Test test images.
//
// The selection ignores the labels (the paper gave every user exactly 54
// images per class; a class-stratified draw would depend on the labels):
// if the pool's images are i.i.d. draws from a distribution D, so is every
// client's sample, and so is the union of their training samples, which is
// what GenFL's global bound (FEDBOUND) assumes; the test images are fresh
// draws from the same D.
func IID(im *Images, cfg IIDConfig) (*Dataset, error) {
	if cfg.Clients < 1 || cfg.Train < 1 || cfg.Test < 0 {
		return nil, fmt.Errorf("iid: need ≥ 1 client and training image, ≥ 0 test images; got %d clients, %d + %d "+
			"images", cfg.Clients, cfg.Train, cfg.Test)
	}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	per := cfg.Train + cfg.Test
	if need := float64(cfg.Clients) * float64(per); need > float64(im.N()) {
		return nil, fmt.Errorf("iid: %d clients × (%d + %d) images = %.0f, the pool %s has %d", cfg.Clients, cfg.Train,
			cfg.Test, need, im.Name, im.N())
	}
	all := make([]int, im.N())
	for i := range all {
		all[i] = i
	}
	r := rng(cfg.Seed, tagIID)
	r.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
	parts := make([]part, cfg.Clients)
	for k := range parts {
		blk := all[k*per : (k+1)*per : (k+1)*per]
		parts[k] = part{train: slices.Clone(blk[:cfg.Train]), test: slices.Clone(blk[cfg.Train:])}
	}
	return im.dataset(fmt.Sprintf("%s/iid-%dx%d+%d", im.Name, cfg.Clients, cfg.Train, cfg.Test), parts, nil, cfg.Seed),
		nil
}

// ShardsConfig configures the label-sorted shards split (McMahan et al.'s
// non-i.i.d. FedAvg protocol, GenFL's PFL setting, docs/math.md §7).
type ShardsConfig struct {
	Clients         int     // users K ≥ 1
	ShardSize       int     // images per shard (0: 300)
	ShardsPerClient int     // shards per user (0: 2)
	TestFraction    float64 // of each user's images, its test set (0: 0.1)
	Seed            uint64
}

// Shards draws Clients·ShardsPerClient·ShardSize images of the pool at
// random (stream (Seed, "shards")), sorts them by label (stably, so each
// label's images stay in random order), cuts the sorted sequence into
// chunks of ShardSize contiguous images — each holding at most two labels —
// and deals ShardsPerClient chunks to every client in a random order
// (stream (Seed, "shdeal")). Each client's images are then shuffled and
// round(TestFraction·n) of them (at least 1, at most n−1) are its test set
// (stream (Seed, "shtests", k)).
func Shards(im *Images, cfg ShardsConfig) (*Dataset, error) {
	if cfg.ShardSize == 0 {
		cfg.ShardSize = 300
	}
	if cfg.ShardsPerClient == 0 {
		cfg.ShardsPerClient = 2
	}
	if cfg.TestFraction == 0 {
		cfg.TestFraction = 0.1
	}
	switch {
	case cfg.Clients < 1 || cfg.ShardSize < 1 || cfg.ShardsPerClient < 1:
		return nil, fmt.Errorf("shards: need ≥ 1 client, shard size and shard per client; got %d, %d, %d", cfg.Clients,
			cfg.ShardSize, cfg.ShardsPerClient)
	case !(cfg.TestFraction > 0 && cfg.TestFraction < 1):
		return nil, fmt.Errorf("shards: test fraction must lie in (0, 1), got %v", cfg.TestFraction)
	case cfg.ShardSize*cfg.ShardsPerClient < 2:
		return nil, fmt.Errorf("shards: a client needs ≥ 2 images (one training, one test), got %d",
			cfg.ShardSize*cfg.ShardsPerClient)
	}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	nShards := cfg.Clients * cfg.ShardsPerClient
	if need := float64(nShards) * float64(cfg.ShardSize); need > float64(im.N()) {
		return nil, fmt.Errorf("shards: %d clients × %d shards × %d images = %.0f, the pool %s has %d", cfg.Clients,
			cfg.ShardsPerClient, cfg.ShardSize, need, im.Name, im.N())
	}
	all := make([]int, im.N())
	for i := range all {
		all[i] = i
	}
	r := rng(cfg.Seed, tagShards)
	r.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
	pool := all[:nShards*cfg.ShardSize]
	slices.SortStableFunc(pool, func(a, b int) int { return cmp.Compare(im.Labels[a], im.Labels[b]) })
	order := rng(cfg.Seed, tagShardDeal).Perm(nShards)
	parts := make([]part, cfg.Clients)
	for k := range parts {
		var idx []int
		for s := range cfg.ShardsPerClient {
			sh := order[k*cfg.ShardsPerClient+s]
			idx = append(idx, pool[sh*cfg.ShardSize:(sh+1)*cfg.ShardSize]...)
		}
		rk := rng(cfg.Seed, tagShardTest, uint64(k))
		rk.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		nt := min(max(int(math.Round(cfg.TestFraction*float64(len(idx)))), 1), len(idx)-1)
		parts[k] = part{train: idx[nt:], test: idx[:nt]}
	}
	name := fmt.Sprintf("%s/shards-%dx%dx%d", im.Name, cfg.Clients, cfg.ShardsPerClient, cfg.ShardSize)
	return im.dataset(name, parts, nil, cfg.Seed), nil
}
