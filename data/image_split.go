package data

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/option"
)

// The federated partitions of an image set (ImageSplit.Partition).
const (
	// PartitionLabels5 is pFedBayes's protocol (Labels5): one existing
	// client per class, each holding five labels.
	PartitionLabels5 = "labels5"
	// PartitionDirichlet is the Dirichlet split (Dirichlet) over a chosen
	// number of clients.
	PartitionDirichlet = "dirichlet"
)

// ImageSplit is a federated split of an image set by either partition,
// with the settings both share, so that a front end fills one value and
// builds any seed's data set, or one client's data, from it.
type ImageSplit struct {
	Partition string // PartitionLabels5 or PartitionDirichlet
	// Split is the sizes of PartitionLabels5: a key of Labels5Sizes.
	Split string
	// Dirichlet holds the settings of PartitionDirichlet (its Seed is
	// ignored: Dataset and Client take the seed). New, MaxImages and
	// Pixels apply to both partitions; Alpha, Clients, TestFraction and
	// MinSamples to PartitionDirichlet alone.
	Dirichlet DirichletConfig
}

// Validate reports, as an *option.FieldError, the first setting that
// makes no split whatever the images: an unknown partition or split, α
// not positive and finite, fewer than one existing client or a negative
// number of new clients (PartitionDirichlet), a negative MaxImages or an
// unknown pixel scale.
func (s ImageSplit) Validate() error {
	d := &s.Dirichlet
	switch s.Partition {
	case PartitionLabels5:
		if _, ok := Labels5Sizes[s.Split]; !ok {
			return quoted("Split", s.Split, "unknown %s %q (want small, medium or large)")
		}
	case PartitionDirichlet:
		switch {
		case !(d.Alpha > 0) || math.IsInf(d.Alpha, 0):
			return option.Range("", "Dirichlet.Alpha", d.Alpha, "must be positive and finite")
		case d.Clients < 1:
			return option.Range("", "Dirichlet.Clients", d.Clients, "must be at least 1")
		}
	default:
		return quoted("Partition", s.Partition, "unknown %s %q (want labels5 or dirichlet)")
	}
	switch {
	case d.New < 0:
		return option.Range("", "Dirichlet.New", d.New, "must be ≥ 0")
	case d.MaxImages < 0:
		return option.Range("", "Dirichlet.MaxImages", d.MaxImages, "must be ≥ 0")
	case d.Pixels.check() != nil:
		return quoted("Dirichlet.Pixels", string(d.Pixels), "%s %q: want unit or symmetric")
	}
	return nil
}

// quoted is field's error whose text puts its name and its value, quoted,
// into format.
func quoted(field, value, format string) *option.FieldError {
	return option.Custom("", []string{field}, []any{value},
		func(names []string) string { return fmt.Sprintf(format, names[0], value) })
}

// Labels5 is the configuration of PartitionLabels5 for seed.
func (s ImageSplit) Labels5(seed uint64) Labels5Config {
	d := &s.Dirichlet
	return Labels5Config{Split: s.Split, New: d.New, MaxImages: d.MaxImages, Seed: seed, Pixels: d.Pixels}
}

// dirichlet is the configuration of PartitionDirichlet for seed.
func (s ImageSplit) dirichlet(seed uint64) DirichletConfig {
	d := s.Dirichlet
	d.Seed = seed
	return d
}

// Dataset splits im for seed: Labels5 or Dirichlet.
func (s ImageSplit) Dataset(im *Images, seed uint64) (*Dataset, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Partition == PartitionLabels5 {
		return Labels5(im, s.Labels5(seed))
	}
	return Dirichlet(im, s.dirichlet(seed))
}

// Client is existing client i of Dataset(im, seed), bit for bit, built
// without the other clients' data (Labels5Client or DirichletClient).
func (s ImageSplit) Client(im *Images, seed uint64, i int) (*ClientData, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Partition == PartitionLabels5 {
		return Labels5Client(im, s.Labels5(seed), i)
	}
	return DirichletClient(im, s.dirichlet(seed), i)
}

// Existing is the number of existing clients the split gives an image set
// of the given classes: one per class for PartitionLabels5.
func (s ImageSplit) Existing(classes int) int {
	if s.Partition == PartitionLabels5 {
		return classes
	}
	return s.Dirichlet.Clients
}

// String names the split, as in "labels5 small" or "dirichlet α=0.4 n=10",
// followed by " (at most N images)" under a MaxImages cap.
func (s ImageSplit) String() string {
	str := fmt.Sprintf("%s α=%g n=%d", s.Partition, s.Dirichlet.Alpha, s.Dirichlet.Clients)
	if s.Partition == PartitionLabels5 {
		str = fmt.Sprintf("%s %s", s.Partition, s.Split)
	}
	if s.Dirichlet.MaxImages > 0 {
		str += fmt.Sprintf(" (at most %d images)", s.Dirichlet.MaxImages)
	}
	return str
}
