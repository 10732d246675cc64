package data

import (
	"math/rand/v2"
	"testing"
)

func TestRowSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var s RowSampler
	m, d := 30, 2
	x := make([]float64, m*d)
	y := make([]float64, m)
	for j := 0; j < m; j++ {
		x[j*d], x[j*d+1], y[j] = float64(j), -float64(j), float64(j)
	}
	counts := make([]int, m)
	for trial := 0; trial < 300; trial++ {
		bx, by, err := s.Sample(x, y, d, 7, rng)
		if err != nil || len(by) != 7 || len(bx) != 14 {
			t.Fatalf("batch of %d rows, %d inputs, error %v", len(by), len(bx), err)
		}
		seen := map[float64]bool{}
		for i, v := range by {
			if seen[v] {
				t.Fatalf("row %v drawn twice in one batch", v)
			}
			seen[v] = true
			if bx[i*d] != v || bx[i*d+1] != -v {
				t.Fatalf("row %v came with inputs %v", v, bx[i*d:i*d+d])
			}
			counts[int(v)]++
		}
	}
	for j, c := range counts { // 70 expected each; 30 is 5 standard deviations off
		if c < 30 || c > 110 {
			t.Errorf("row %d drawn %d times in 300 batches of 7 of 30", j, c)
		}
	}
	// A batch depends only on the stream, not on the sampler's history.
	var fresh RowSampler
	_, by1, _ := s.Sample(x, y, d, 5, rand.New(rand.NewPCG(1, 1)))
	by1 = append([]float64(nil), by1...)
	_, by2, _ := fresh.Sample(x, y, d, 5, rand.New(rand.NewPCG(1, 1)))
	for i := range by1 {
		if by1[i] != by2[i] {
			t.Fatalf("same stream, different batches: %v and %v", by1, by2)
		}
	}
	// The whole data set: x and y themselves.
	if bx, by, err := s.Sample(x, y, d, 30, rng); err != nil || &bx[0] != &x[0] || &by[0] != &y[0] {
		t.Error("b = m did not return the data themselves")
	}
	for _, b := range []int{0, -1} {
		if _, _, err := s.Sample(x, y, d, b, rng); err == nil {
			t.Errorf("batch size %d accepted", b)
		}
	}
	if _, _, err := s.Sample(x[:5], y, d, 3, rng); err == nil {
		t.Error("5 inputs for 30 rows of dimension 2 accepted")
	}
	if a := testing.AllocsPerRun(20, func() { s.Sample(x, y, d, 10, rng) }); a != 0 {
		t.Errorf("%v allocations per batch in steady state", a)
	}
}
