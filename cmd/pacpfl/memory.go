package main

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/pacpfl/pacpfl/lml"
)

// The one memory estimate of the commands that train or evaluate models:
// every large allocation, counted in float64s from the flags and the data
// sizes before anything is allocated. Go cannot recover from a failed
// allocation and the kernel's OOM killer ends the process without a word, so
// a size that cannot fit is refused with a message that says which term is
// large. (The estimate once counted 3·k·dφ for --k and missed the SVGD k×k
// matrices: --k 40000 needed ≈ 60 GB and was let through.)

// memoryPlan lists the large allocations of one command.
type memoryPlan struct {
	items []memItem
}

type memItem struct {
	what   string
	floats float64
}

// add counts floats float64 values for what.
func (p *memoryPlan) add(what string, floats float64) {
	p.items = append(p.items, memItem{what, floats})
}

// bytes is the total.
func (p *memoryPlan) bytes() float64 {
	var s float64
	for _, it := range p.items {
		s += 8 * it.floats
	}
	return s
}

// check refuses the plan if it exceeds the available memory; flags names
// the flags that set the sizes.
func (p *memoryPlan) check(flags string) error {
	total, avail := p.bytes(), availableMemory()
	if avail <= 0 || total <= avail {
		return nil
	}
	items := append([]memItem(nil), p.items...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].floats > items[j].floats })
	var parts []string
	for _, it := range items[:min(3, len(items))] {
		parts = append(parts, fmt.Sprintf("%s %s", it.what, gib(8*it.floats)))
	}
	return usagef("%s needs about %s (%s), but only %s of memory is available", flags, gib(total), strings.Join(parts, ", "), gib(avail))
}

func gib(bytes float64) string { return fmt.Sprintf("%.3g GiB", bytes/(1<<30)) }

// addServer counts what the server holds for k particles of dimension dim
// with c clients per round (fl.NewServer, svgd.New and the optimiser):
// particles, scores, the SVGD direction, Adam's two moments and the result's
// copy (6·k·dim), one gradient buffer per round slot (c·k·dim) and SVGD's
// three k×k matrices (distances, kernel, scratch).
func (p *memoryPlan) addServer(k, dim, c int) {
	kf, df := float64(k), float64(dim)
	p.add("particles, gradients and optimiser state (k×dφ each)", (6+float64(c))*kf*df)
	p.add("SVGD's k×k matrices", 3*kf*kf)
}

// gpWorkspaceFloats is an lml.Workspace on m rows: both networks'
// activations, the feature and gradient rows, and the m×m kernel matrix, its
// inverse and its Cholesky factor.
func gpWorkspaceFloats(model lml.Model, m int) float64 {
	widths := 0
	maxW := model.DF
	for _, h := range [][]int{model.MeanHidden, model.KernelHidden} {
		for _, w := range h {
			widths += w
			maxW = max(maxW, w)
		}
	}
	mf := float64(m)
	return mf*float64(widths+1+model.DF) + mf*float64(2*model.DF+4+2*maxW) + 3*mf*mf
}

// addGPTraining counts a GP run on top of the server: the n clients' LML
// buffers and workspaces (m rows at most), and the personalisation, where
// each of the workers holds all k particles conditioned on up to mCond
// points (a copy of φ, the factor, the features) and the mixture over nTest
// test points.
func (p *memoryPlan) addGPTraining(model lml.Model, k, n, m, mCond, nTest int) {
	kf, dim := float64(k), float64(model.NumParams())
	p.add("the clients' LML workspaces", float64(n)*(kf+gpWorkspaceFloats(model, m)))
	workers := float64(runtime.GOMAXPROCS(0))
	mc := float64(mCond)
	p.add("the personalised particles (k per core)",
		workers*(kf*(dim+mc*mc+mc*float64(model.DF+1))+2*float64(nTest)*kf+gpWorkspaceFloats(model, mCond)))
}
