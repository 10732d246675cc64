package cholesky

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
)

// TestTuneParams compares leaf-size variants of the native Dpotrf and Dpotri
// side by side (bench.Alternate, minimum of reps). It is how defaultParams
// were chosen; it only runs with PACPFL_TUNE=1 (it is a measurement, not a
// test). PACPFL_TUNE_N sets the sizes (default 1000,2000).
func TestTuneParams(t *testing.T) {
	if os.Getenv("PACPFL_TUNE") != "1" {
		t.Skip("set PACPFL_TUNE=1 to run the leaf-size measurement")
	}
	sizes := []int{1000, 2000}
	if s := os.Getenv("PACPFL_TUNE_N"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			sizes = append(sizes, n)
		}
	}
	bl, err := linalg.Backend("native")
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]params{}
	for _, tr := range []int{64, 128} {
		p := defaultParams
		p.trsm = tr
		variants[fmt.Sprintf("rec,trsm=%d", tr)] = p
	}
	for _, nb := range []int{128, 192, 256} {
		p := defaultParams
		p.trsm, p.right = 256, nb
		variants[fmt.Sprintf("lookahead,nb=%d", nb)] = p
		p.noLookahead = true
		variants[fmt.Sprintf("right,nb=%d", nb)] = p
	}
	if op := os.Getenv("PACPFL_TUNE_OP"); op == "potri" {
		variants = map[string]params{}
		for _, tm := range []int{64, 128, 256} {
			p := defaultParams
			p.trmm = tm
			variants[fmt.Sprintf("trmm=%d", tm)] = p
			p.noHalves = true
			variants[fmt.Sprintf("trmm=%d,sequential", tm)] = p
		}
	}
	for _, n := range sizes {
		a := randSPD(rand.New(rand.NewPCG(1, 1)), n, n)
		var cs []bench.Contender
		for name, p := range variants {
			impl := NewNative(bl)
			impl.p = p
			w := make([]float64, n*n)
			src := a
			run := func() error { impl.Dpotrf('L', n, w, n); return nil }
			if os.Getenv("PACPFL_TUNE_OP") == "potri" {
				src = append([]float64(nil), a...)
				impl.Dpotrf('L', n, src, n)
				run = func() error { impl.Dpotri('L', n, w, n); return nil }
			}
			cs = append(cs, bench.Contender{Name: name, Setup: func() { copy(w, src) }, Run: run})
		}
		for _, ref := range []string{"openblas"} {
			impl, err := Backend(ref)
			if err != nil {
				continue
			}
			w := make([]float64, n*n)
			src := a
			run := func() error { impl.Dpotrf('L', n, w, n); return nil }
			if os.Getenv("PACPFL_TUNE_OP") == "potri" {
				src = append([]float64(nil), a...)
				impl.Dpotrf('L', n, src, n)
				run = func() error { impl.Dpotri('L', n, w, n); return nil }
			}
			cs = append(cs, bench.Contender{Name: ref, Setup: func() { copy(w, src) }, Run: run})
		}
		best, _ := bench.Alternate(5, cs)
		for i, c := range cs {
			t.Logf("n=%d %-22s %.4f s  %.2f GFLOP/s(n³/3)", n, c.Name, best[i],
				float64(n)*float64(n)*float64(n)/3/best[i]/1e9)
		}
	}
}
