package methods

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/option"
)

// GenFL's partitions of Fashion-MNIST (GenFLData.Partition).
const (
	// PartitionIID: label-blind random draws, Train + Test images per
	// user (data.IID; the paper's Table 1).
	PartitionIID = "iid"
	// PartitionShards: two label-sorted shards of ShardSize images per
	// user, 10 % of them its test set (data.Shards, McMahan et al.; the
	// paper's Table 2).
	PartitionShards = "shards"
	// PartitionLabels5: pFedBayes's split of experiment fmnist (data.Labels5
	// with Split): one user per class holding 5 labels, Clients unused.
	PartitionLabels5 = "labels5"
)

// GenFLData is the federation of GenFL's experiments (Jobic, Haddouche,
// Guedj 2023) on an image pool: Clients users by Partition.
type GenFLData struct {
	Partition string
	Clients   int
	// Train and Test: images per user of PartitionIID.
	Train, Test int
	// ShardSize: images per shard of PartitionShards.
	ShardSize int
	// Split: small, medium or large (data.Labels5Sizes) of
	// PartitionLabels5, with New new clients and at most MaxImages images
	// (0: no cap; data.Labels5Config).
	Split          string
	New, MaxImages int
}

// DefaultGenFLData is the paper's federation: 100 users with 540 training
// and 60 test images each (iid), or shards of 300 images.
func DefaultGenFLData() GenFLData {
	return GenFLData{Partition: PartitionIID, Clients: 100, Train: 540, Test: 60, ShardSize: 300, Split: "small"}
}

// Validate reports, as an *option.FieldError, an unknown partition or a
// number of users, of images per user or of images per shard below 1
// (each checked whatever the partition).
func (d GenFLData) Validate() error {
	if d.Partition != PartitionIID && d.Partition != PartitionShards && d.Partition != PartitionLabels5 {
		return option.Custom("", []string{"Partition"}, []any{d.Partition}, func(n []string) string {
			return fmt.Sprintf("unknown %s %q (%s, %s or %s)", n[0], d.Partition, PartitionIID, PartitionShards,
				PartitionLabels5)
		})
	}
	if _, ok := data.Labels5Sizes[d.Split]; d.Partition == PartitionLabels5 && !ok {
		return option.Custom("", []string{"Split"}, []any{d.Split}, func(n []string) string {
			return fmt.Sprintf("unknown %s %q (small, medium or large)", n[0], d.Split)
		})
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"Clients", d.Clients}, {"Train", d.Train}, {"Test", d.Test}, {"ShardSize", d.ShardSize}} {
		if c.v < 1 {
			return option.Range("", c.field, c.v, "must be at least 1")
		}
	}
	if d.New < 0 || d.MaxImages < 0 {
		f, v := "New", d.New
		if d.MaxImages < 0 {
			f, v = "MaxImages", d.MaxImages
		}
		return option.Range("", f, v, "must be at least 0")
	}
	return nil
}

// Setting is the GenFLBound setting the paper runs on the partition:
// FLSOB on iid users, PFL on shards ("" for an unknown partition).
func (d GenFLData) Setting() string {
	return map[string]string{PartitionIID: FLSOB, PartitionShards: PFL, PartitionLabels5: PFL}[d.Partition]
}

// Users is the number of users: Clients, or one per class with labels5
// (classes, Fashion-MNIST's 10).
func (d GenFLData) Users(classes int) int {
	if d.Partition == PartitionLabels5 {
		return classes
	}
	return d.Clients
}

// PooledTestImages is the number of test images the users pool for the
// measured test error: Clients·Test on iid users, 0 on shards (each
// user's error is measured on its own test images).
func (d GenFLData) PooledTestImages() int {
	if d.Partition != PartitionIID {
		return 0
	}
	return d.Clients * d.Test
}

// Data returns the data set of a seed drawn from im (a harness.Experiment's
// Data): data.IID or data.Shards with the seed.
func (d GenFLData) Data(im *data.Images) func(seed uint64) (*data.Dataset, error) {
	return func(seed uint64) (*data.Dataset, error) {
		switch d.Partition {
		case PartitionIID:
			return data.IID(im, data.IIDConfig{Clients: d.Clients, Train: d.Train, Test: d.Test, Seed: seed})
		case PartitionShards:
			return data.Shards(im, data.ShardsConfig{Clients: d.Clients, ShardSize: d.ShardSize, Seed: seed})
		case PartitionLabels5:
			return data.Labels5(im, data.Labels5Config{Split: d.Split, New: d.New, MaxImages: d.MaxImages, Seed: seed, Pixels: data.PixelsUnit})
		}
		return nil,
			fmt.Errorf("methods: unknown GenFL partition %q (%s or %s)", d.Partition, PartitionIID, PartitionShards)
	}
}
