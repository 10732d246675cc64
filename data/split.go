package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Purpose tags of the splits' random streams (ASCII words, see StreamID).
const (
	tagLabels5   = 0x6c6162656c7335   // "labels5": shuffle of each label's images
	tagRows      = 0x726f777368756666 // "rowshuff": order of a client's rows
	tagDirichlet = 0x646972696368     // "dirich": label proportions
	tagDirLabel  = 0x6469726c6162656c // "dirlabel": shuffle of each label's images
	tagDirClient = 0x646972636c69656e // "dirclien": a client's train/test split
	tagSubset    = 0x737562736574     // "subset": the MaxImages subset
	tagIID       = 0x696964           // "iid": the i.i.d. split's permutation
	tagShards    = 0x736861726473     // "shards": the shards' pool and order
	tagShardDeal = 0x73686465616c     // "shdeal": which shards a client gets
	tagShardTest = 0x73687465737473   // "shtests": a client's train/test split
)

// PixelScale is how the splits turn a stored pixel p ∈ {0, …, 255} into
// the float64 a client sees.
type PixelScale string

// The pixel scales. The zero value is PixelsUnit.
const (
	// PixelsUnit is p/255 in [0, 1], this package's default.
	PixelsUnit PixelScale = "unit"
	// PixelsSymmetric is 2p/255 − 1 in [−1, 1]: torchvision's
	// Normalize(0.5, 0.5) after ToTensor, the preparation of the pFedBayes
	// authors' data (their generate_niid_users_mnist.py).
	PixelsSymmetric PixelScale = "symmetric"
)

// check returns an error naming an unknown scale.
func (s PixelScale) check() error {
	switch s {
	case "", PixelsUnit, PixelsSymmetric:
		return nil
	}
	return fmt.Errorf("unknown pixel scale %q (unit or symmetric)", string(s))
}

// CheckPixelScale returns an error naming s unless it is a known scale
// ("" counts as PixelsUnit).
func CheckPixelScale(s string) error { return PixelScale(s).check() }

// part is one client's share of an image pool: indices of its training
// and test images.
type part struct{ train, test []int }

// rng returns the PCG stream (seed, tag, idx...).
func rng(seed, tag uint64, idx ...uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, StreamID(tag, idx...)))
}

// byLabel returns the indices of pool grouped by label, each group in pool
// order and then shuffled by its own stream (seed, tag, label).
func (im *Images) byLabel(pool []int, seed, tag uint64) [][]int {
	g := make([][]int, im.Classes)
	for _, i := range pool {
		l := im.Labels[i]
		g[l] = append(g[l], i)
	}
	for l := range g {
		r := rng(seed, tag, uint64(l))
		r.Shuffle(len(g[l]), func(a, b int) { g[l][a], g[l][b] = g[l][b], g[l][a] })
	}
	return g
}

// subset is the pool of a split: every image, or with 0 < max < N a
// random subset of max images chosen by the stream (seed, "subset"), in
// ascending order.
func (im *Images) subset(max int, seed uint64) []int {
	all := make([]int, im.N())
	for i := range all {
		all[i] = i
	}
	if max <= 0 || max >= len(all) {
		return all
	}
	r := rng(seed, tagSubset)
	r.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
	s := all[:max]
	slices.Sort(s)
	return s
}

// dataset builds the clients of the parts: rows in an order shuffled by
// the stream (seed, "rowshuff", group, client) so that a client's data are
// not sorted by label, pixels as float64 pixel/255, labels as float64.
func (im *Images) dataset(name string, existing, newParts []part, seed uint64) *Dataset {
	return im.datasetOnly(name, existing, newParts, seed, -1, PixelsUnit)
}

// datasetOnly is dataset, with only existing client only (≥ 0) given its
// data: the others are left empty (the same rows as dataset's, since each
// client's order has its own stream), and pixels scaled by px.
func (im *Images) datasetOnly(name string, existing, newParts []part, seed uint64, only int, px PixelScale) *Dataset {
	ds := &Dataset{Name: name, D: im.D(), Classes: im.Classes, YStd: 1}
	for g, parts := range [][]part{existing, newParts} {
		cs := make([]ClientData, len(parts))
		for c, p := range parts {
			if only >= 0 && (g != 0 || c != only) {
				continue
			}
			r := rng(seed, tagRows, uint64(g), uint64(c))
			for _, idx := range [][]int{p.train, p.test} {
				r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			}
			cs[c].X, cs[c].Y = im.rows(p.train, px)
			cs[c].XTest, cs[c].YTest = im.rows(p.test, px)
		}
		if g == 0 {
			ds.Existing = cs
		} else {
			ds.New = cs
		}
	}
	return ds
}

// existingClient checks i against the existing clients of ds (built by
// datasetOnly with only = i) and returns client i.
func existingClient(ds *Dataset, i int, split string) (*ClientData, error) {
	if i < 0 || i >= len(ds.Existing) {
		return nil, fmt.Errorf("%s: client %d: the split has %d existing clients (0 to %d)", split, i, len(ds.Existing),
			len(ds.Existing)-1)
	}
	return &ds.Existing[i], nil
}

// rows returns the images idx as a row-major len(idx)×D matrix of pixels
// scaled by px and their labels.
func (im *Images) rows(idx []int, px PixelScale) (x, y []float64) {
	d := im.D()
	// p/255 or (2p − 255)/255: one correctly rounded division either way
	// (the unit scale's values are bit for bit those it always had).
	off, mul := 0.0, 1.0
	if px == PixelsSymmetric {
		off, mul = -255, 2
	}
	x = make([]float64, len(idx)*d)
	y = make([]float64, len(idx))
	for r, i := range idx {
		row := x[r*d : (r+1)*d]
		for j, p := range im.Pixels[i*d : (i+1)*d] {
			row[j] = (mul*float64(p) + off) / 255
		}
		y[r] = float64(im.Labels[i])
	}
	return x, y
}
