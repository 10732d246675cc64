package data

import (
	"errors"
	"fmt"
	"math"
)

// Labels5Sizes are the pFedBayes splits (docs/math.md §3): training and test
// images per label per client.
var Labels5Sizes = map[string][2]int{
	"small":  {50, 950},
	"medium": {200, 800},
	"large":  {900, 300},
}

// labels5PerClient is the number of labels each client holds.
const labels5PerClient = 5

// Labels5Config configures the pFedBayes split of an image pool.
type Labels5Config struct {
	// Split is "small", "medium" or "large" (Labels5Sizes); or "" with
	// Train and Test set to custom sizes.
	Split       string
	Train, Test int // images per label per client when Split is ""
	New         int // new clients, built from the images left over
	// MaxImages caps the images used (0: no cap): when the protocol's
	// (existing + new) × 5 × (Train + Test) images exceed it, Train and Test
	// are scaled down by the same factor (rounded down, at least 1 each).
	MaxImages int
	Seed      uint64
	Pixels    PixelScale // "" or PixelsUnit: p/255; PixelsSymmetric: 2p/255 − 1
}

// Labels5 is the pFedBayes protocol (docs/math.md §3) on the pooled images: one
// existing client per class (10 for Fashion-MNIST), client i holding the 5
// labels i, i+1, …, i+4 mod C, so that each label serves exactly 5 existing
// clients; each client gets Train training and Test test images of each of
// its labels, all distinct. Each label's images are shuffled by the stream
// (Seed, "labels5", label) and dealt out in client order.
//
// New client j holds the labels 5j, …, 5j+4 mod C (for C = 10: clients 0
// and 1 together cover every label once, clients 2 and 3 again, …) and is
// dealt from the images the existing clients left. Where a label has fewer
// left than its new clients need, they share what is left equally, split
// between training and test in the proportion Train:Test; the Dataset's
// Notes say so. Fewer than 2 images per new client is an error.
func Labels5(im *Images, cfg Labels5Config) (*Dataset, error) { return labels5(im, cfg, -1) }

// Labels5Client is existing client i of Labels5(im, cfg), bit for bit,
// without building the other clients' data (a client process builds only
// its own split).
func Labels5Client(im *Images, cfg Labels5Config, i int) (*ClientData, error) {
	if i < 0 {
		return nil, fmt.Errorf("labels5: client %d < 0", i)
	}
	ds, err := labels5(im, cfg, i)
	if err != nil {
		return nil, err
	}
	return existingClient(ds, i, "labels5")
}

// labels5 builds the split; only ≥ 0 builds only existing client only.
func labels5(im *Images, cfg Labels5Config, only int) (*Dataset, error) {
	train, test, err := cfg.sizes()
	if err != nil {
		return nil, err
	}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	C := im.Classes
	if C < labels5PerClient {
		return nil, fmt.Errorf("labels5: %s has %d classes, the split needs at least %d", im.Name, C, labels5PerClient)
	}
	var notes []string
	if cfg.MaxImages > 0 {
		nominal := (C + cfg.New) * labels5PerClient * (train + test)
		if min1 := (C + cfg.New) * labels5PerClient * 2; min1 > cfg.MaxImages {
			return nil, fmt.Errorf("labels5: MaxImages %d is below the %d images of one training and one test image "+
				"per label per client", cfg.MaxImages, min1)
		}
		if nominal > cfg.MaxImages {
			f := float64(cfg.MaxImages) / float64(nominal)
			tr, te := max(1, int(float64(train)*f)), max(1, int(float64(test)*f))
			notes = append(notes, fmt.Sprintf("labels5: at most %d images: %d training + %d test images per label "+
				"per client instead of %d + %d", cfg.MaxImages, tr, te, train, test))
			train, test = tr, te
		}
	}
	byLabel := im.byLabel(im.subset(0, cfg.Seed), cfg.Seed, tagLabels5)
	next := make([]int, C) // next unused position in byLabel[l]
	need := labels5PerClient * (train + test)
	for l, idx := range byLabel {
		if len(idx) < need {
			return nil, fmt.Errorf("labels5: label %d has %d images, its %d existing clients need %d × (%d + %d) = %d",
				l, len(idx), labels5PerClient, labels5PerClient, train, test, need)
		}
	}
	take := func(l, n int) []int {
		s := byLabel[l][next[l] : next[l]+n : next[l]+n]
		next[l] += n
		return s
	}
	existing := make([]part, C)
	for i := range existing {
		for t := range labels5PerClient {
			l := (i + t) % C
			existing[i].train = append(existing[i].train, take(l, train)...)
			existing[i].test = append(existing[i].test, take(l, test)...)
		}
	}

	// New clients: per label, how many hold it and how many images each gets.
	newLabels := func(j, t int) int { return (labels5PerClient*j + t) % C }
	holders := make([]int, C)
	for j := range cfg.New {
		for t := range labels5PerClient {
			holders[newLabels(j, t)]++
		}
	}
	shareTrain, shareTest := make([]int, C), make([]int, C)
	short := map[[4]int][]int{} // (left, holders, train, test) → labels
	var shortKeys [][4]int
	for l := range C {
		if holders[l] == 0 {
			continue
		}
		left := len(byLabel[l]) - next[l]
		q := left / holders[l]
		if q >= train+test {
			shareTrain[l], shareTest[l] = train, test
			continue
		}
		if q < 2 {
			return nil, fmt.Errorf("labels5: label %d has %d images left for %d new clients, fewer than 1 training + "+
				"1 test image each", l, left, holders[l])
		}
		tr := min(max(int(math.Round(float64(q)*float64(train)/float64(train+test))), 1), q-1)
		shareTrain[l], shareTest[l] = tr, q-tr
		k := [4]int{left, holders[l], tr, q - tr}
		if _, ok := short[k]; !ok {
			shortKeys = append(shortKeys, k)
		}
		short[k] = append(short[k], l)
	}
	for _, k := range shortKeys {
		notes = append(notes, fmt.Sprintf("labels5: new clients get fewer images than the split asks for: labels %v "+
			"have %d images left for %d new client(s) each: %d training + %d test images per label per client "+
			"instead of %d + %d",
			short[k], k[0], k[1], k[2], k[3], train, test))
	}
	newParts := make([]part, cfg.New)
	for j := range newParts {
		for t := range labels5PerClient {
			l := newLabels(j, t)
			newParts[j].train = append(newParts[j].train, take(l, shareTrain[l])...)
			newParts[j].test = append(newParts[j].test, take(l, shareTest[l])...)
		}
	}
	split := cfg.Split
	if split == "" {
		split = fmt.Sprintf("%d+%d", cfg.Train, cfg.Test)
	}
	ds := im.datasetOnly(im.Name+"/labels5-"+split, existing, newParts, cfg.Seed, only, cfg.Pixels)
	ds.Notes = notes
	return ds, nil
}

// sizes returns the training and test images per label per client.
func (c Labels5Config) sizes() (train, test int, err error) {
	if c.New < 0 {
		return 0, 0, fmt.Errorf("labels5: negative number of new clients %d", c.New)
	}
	if c.MaxImages < 0 {
		return 0, 0, fmt.Errorf("labels5: negative MaxImages %d", c.MaxImages)
	}
	if err := c.Pixels.check(); err != nil {
		return 0, 0, fmt.Errorf("labels5: %w", err)
	}
	if c.Split == "" {
		if c.Train < 1 || c.Test < 1 {
			return 0, 0, fmt.Errorf("labels5: custom sizes need Train ≥ 1 and Test ≥ 1, got %d and %d", c.Train, c.Test)
		}
		return c.Train, c.Test, nil
	}
	s, ok := Labels5Sizes[c.Split]
	if !ok {
		return 0, 0, fmt.Errorf("labels5: unknown split %q (small, medium or large)", c.Split)
	}
	if c.Train != 0 || c.Test != 0 {
		return 0, 0, errors.New("labels5: give either Split or Train and Test, not both")
	}
	return s[0], s[1], nil
}
