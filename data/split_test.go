package data

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// synthImages returns a pool of 2×2 images whose pixels 0–2 encode the
// image's index (base 256) and pixel 3 its label, so that a split's clients
// reveal which pool images they hold. perLabel[l] images have label l,
// interleaved over the pool.
func synthImages(perLabel []int) *Images {
	im := &Images{Name: "synth", Rows: 2, Cols: 2, Classes: len(perLabel)}
	left := slices.Clone(perLabel)
	for more := true; more; {
		more = false
		for l := range left {
			if left[l] == 0 {
				continue
			}
			left[l]--
			more = true
			i := im.N()
			im.Labels = append(im.Labels, uint8(l))
			im.Pixels = append(im.Pixels, uint8(i), uint8(i>>8), uint8(i>>16), uint8(l))
		}
	}
	return im
}

func uniform(classes, n int) []int {
	p := make([]int, classes)
	for i := range p {
		p[i] = n
	}
	return p
}

// source decodes the pool index of each row of x and checks that the row
// is the image's pixels/255 and y its label.
func source(t *testing.T, im *Images, x, y []float64) []int {
	t.Helper()
	if len(x) != 4*len(y) {
		t.Fatalf("%d inputs for %d labels", len(x), len(y))
	}
	idx := make([]int, len(y))
	for r := range y {
		row := x[4*r : 4*r+4]
		for j, v := range row {
			if b := math.Round(v * 255); b != v*255 || b < 0 || b > 255 {
				t.Fatalf("pixel %v is not a byte/255", v)
			}
			_ = j
		}
		i := int(row[0]*255) + int(row[1]*255)<<8 + int(row[2]*255)<<16
		if i >= im.N() || y[r] != float64(im.Labels[i]) || row[3]*255 != float64(im.Labels[i]) {
			t.Fatalf("row %d: image %d label %v, pool label %d", r, i, y[r], im.Labels[i])
		}
		for j := range 4 {
			if row[j] != float64(im.Pixels[4*i+j])/255 {
				t.Fatalf("row %d is not image %d", r, i)
			}
		}
		idx[r] = i
	}
	return idx
}

// clientSources returns, per client of a group, the pool indices of its
// training and test rows, and checks that no image is used twice anywhere
// in the data set.
func clientSources(t *testing.T, im *Images, ds *Dataset) (existing, newc [][2][]int) {
	t.Helper()
	used := map[int]string{}
	for g, group := range [][]ClientData{ds.Existing, ds.New} {
		for c := range group {
			tr := source(t, im, group[c].X, group[c].Y)
			te := source(t, im, group[c].XTest, group[c].YTest)
			for k, idx := range [][]int{tr, te} {
				for _, i := range idx {
					where := [2]string{"existing", "new"}[g] + " client " + string(rune('0'+c)) +
						[2]string{" train", " test"}[k]
					if prev, ok := used[i]; ok {
						t.Fatalf("image %d in %s and in %s", i, prev, where)
					}
					used[i] = where
				}
			}
			if g == 0 {
				existing = append(existing, [2][]int{tr, te})
			} else {
				newc = append(newc, [2][]int{tr, te})
			}
		}
	}
	return existing, newc
}

// labelCounts counts the labels of pool indices.
func labelCounts(im *Images, idx []int) map[int]int {
	m := map[int]int{}
	for _, i := range idx {
		m[int(im.Labels[i])]++
	}
	return m
}

func TestLabels5SetsAndCounts(t *testing.T) {
	im := synthImages(uniform(10, 120))
	ds, err := Labels5(im, Labels5Config{Train: 4, Test: 6, New: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Existing) != 10 || len(ds.New) != 2 || ds.D != 4 || ds.Classes != 10 || len(ds.Notes) != 0 {
		t.Fatalf("%d existing, %d new, D=%d, C=%d, notes %v", len(ds.Existing), len(ds.New), ds.D, ds.Classes, ds.Notes)
	}
	ex, nw := clientSources(t, im, ds)
	want := func(labels []int, n int) map[int]int {
		m := map[int]int{}
		for _, l := range labels {
			m[l] = n
		}
		return m
	}
	for i, c := range ex {
		labels := []int{i, (i + 1) % 10, (i + 2) % 10, (i + 3) % 10, (i + 4) % 10}
		if got := labelCounts(im, c[0]); !mapsEqual(got, want(labels, 4)) {
			t.Errorf("existing client %d training labels %v, want 4 each of %v", i, got, labels)
		}
		if got := labelCounts(im, c[1]); !mapsEqual(got, want(labels, 6)) {
			t.Errorf("existing client %d test labels %v, want 6 each of %v", i, got, labels)
		}
	}
	for j, c := range nw {
		labels := []int{5 * j, 5*j + 1, 5*j + 2, 5*j + 3, 5*j + 4}
		if got := labelCounts(im, c[0]); !mapsEqual(got, want(labels, 4)) {
			t.Errorf("new client %d training labels %v", j, got)
		}
		if got := labelCounts(im, c[1]); !mapsEqual(got, want(labels, 6)) {
			t.Errorf("new client %d test labels %v", j, got)
		}
	}
	// Rows are shuffled, not grouped by label.
	if slices.IsSorted(ds.Existing[0].Y) {
		t.Error("client rows sorted by label")
	}
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// New clients share the images left over when there are too few, and the
// Notes say so; with fewer than two each, it is an error.
func TestLabels5NewClientsShortOfImages(t *testing.T) {
	im := synthImages(uniform(10, 60)) // 50 per label for existing, 10 left
	ds, err := Labels5(im, Labels5Config{Train: 4, Test: 6, New: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, nw := clientSources(t, im, ds)
	for j, c := range nw {
		// Two new clients per label share 10 images: 5 each, 2 training
		// (round(5·4/10)) and 3 test.
		for l, n := range labelCounts(im, c[0]) {
			if n != 2 || (l-5*j%10+10)%10 >= 5 {
				t.Errorf("new client %d: %d training images of label %d", j, n, l)
			}
		}
		if got := len(c[1]); got != 15 {
			t.Errorf("new client %d: %d test images, want 15", j, got)
		}
	}
	if len(ds.Notes) != 1 ||
		!strings.Contains(ds.Notes[0], "2 training + 3 test images per label per client instead of 4 + 6") ||
		!strings.Contains(ds.Notes[0], "[0 1 2 3 4 5 6 7 8 9]") {
		t.Fatalf("notes %q", ds.Notes)
	}
	// Uneven pool: only labels 0–4 short.
	per := uniform(10, 60)
	for l := 5; l < 10; l++ {
		per[l] = 100
	}
	ds, err = Labels5(synthImages(per), Labels5Config{Train: 4, Test: 6, New: 4, Seed: 1})
	if err != nil || len(ds.Notes) != 1 ||
		!strings.Contains(ds.Notes[0], "labels [0 1 2 3 4] have 10 images left for 2 new client(s)") {
		t.Fatalf("uneven pool: %v %q", err, ds.Notes)
	}
	// 12 new clients: 6 share each label's 10 images.
	if _, err := Labels5(im, Labels5Config{Train: 4, Test: 6, New: 12, Seed: 1}); err == nil ||
		!strings.Contains(err.Error(), "10 images left for 6 new clients") {
		t.Fatalf("12 new clients: %v", err)
	}
}

func TestLabels5Presets(t *testing.T) {
	for name, s := range map[string][2]int{"small": {50, 950}, "medium": {200, 800}, "large": {900, 300}} {
		if Labels5Sizes[name] != s {
			t.Errorf("%s = %v, want %v", name, Labels5Sizes[name], s)
		}
	}
	// small needs 5 × 1000 images of each label.
	_, err := Labels5(synthImages(uniform(10, 4999)), Labels5Config{Split: "small"})
	if err == nil ||
		!strings.Contains(err.Error(), "label 0 has 4999 images, its 5 existing clients need 5 × (50 + 950) = 5000") {
		t.Fatalf("%v", err)
	}
	// With a cap the protocol is scaled down: (10+2)·5·1000 = 60000
	// images nominal, 1200 allowed → factor 1/50: 1 training, 19 test.
	im := synthImages(uniform(10, 200))
	ds, err := Labels5(im, Labels5Config{Split: "small", New: 2, MaxImages: 1200, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	ex, nw := clientSources(t, im, ds)
	total := 0
	for _, c := range append(ex, nw...) {
		if len(c[0]) != 5 || len(c[1]) != 95 {
			t.Fatalf("client with %d training and %d test images, want 5 and 95", len(c[0]), len(c[1]))
		}
		total += len(c[0]) + len(c[1])
	}
	if total != 1200 || len(ds.Notes) != 1 || !strings.Contains(ds.Notes[0], "1 training + 19 test") {
		t.Fatalf("total %d, notes %q", total, ds.Notes)
	}
	if ds.Name != "synth/labels5-small" {
		t.Fatalf("name %q", ds.Name)
	}
}

func TestLabels5BadConfig(t *testing.T) {
	im := synthImages(uniform(10, 100))
	for _, c := range []Labels5Config{
		{Split: "tiny"},
		{Split: "small", Train: 3, Test: 3},
		{Train: 0, Test: 3},
		{Train: 3},
		{Train: 1, Test: 1, New: -1},
		{Train: 1, Test: 1, MaxImages: -5},
		{Train: 1, Test: 1, MaxImages: 50}, // below 1+1 per label per client
	} {
		if _, err := Labels5(im, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := Labels5(synthImages(uniform(4, 100)), Labels5Config{Train: 1, Test: 1}); err == nil {
		t.Error("4 classes accepted")
	}
	bad := synthImages(uniform(10, 100))
	bad.Labels[7] = 10
	if _, err := Labels5(bad, Labels5Config{Train: 1, Test: 1}); err == nil {
		t.Error("label 10 of 10 classes accepted")
	}
}

// equalDatasets reports whether two data sets hold identical clients.
func equalDatasets(a, b *Dataset) bool {
	if len(a.Existing) != len(b.Existing) || len(a.New) != len(b.New) {
		return false
	}
	for g, ga := range [][]ClientData{a.Existing, a.New} {
		gb := [][]ClientData{b.Existing, b.New}[g]
		for i := range ga {
			if !slices.Equal(ga[i].X, gb[i].X) || !slices.Equal(ga[i].Y, gb[i].Y) ||
				!slices.Equal(ga[i].XTest, gb[i].XTest) || !slices.Equal(ga[i].YTest, gb[i].YTest) {
				return false
			}
		}
	}
	return true
}

func TestSplitsDeterministic(t *testing.T) {
	im := synthImages(uniform(10, 80))
	splits := map[string]func(seed uint64) (*Dataset, error){
		"labels5": func(s uint64) (*Dataset, error) {
			return Labels5(im, Labels5Config{Train: 3, Test: 4, New: 2, Seed: s})
		},
		"dirichlet": func(s uint64) (*Dataset, error) {
			return Dirichlet(im, DirichletConfig{Clients: 6, New: 2, Alpha: 0.4, Seed: s})
		},
		"dirichlet capped": func(s uint64) (*Dataset, error) {
			return Dirichlet(im, DirichletConfig{Clients: 6, New: 2, Alpha: 0.4, MaxImages: 500, Seed: s})
		},
	}
	for name, split := range splits {
		prev := runtime.GOMAXPROCS(1)
		a, err1 := split(7)
		runtime.GOMAXPROCS(2)
		b, err2 := split(7)
		runtime.GOMAXPROCS(prev)
		c, err3 := split(8)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", name, err1, err2, err3)
		}
		if !equalDatasets(a, b) {
			t.Errorf("%s: same seed, different data", name)
		}
		if equalDatasets(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same data", name)
		}
	}
}

func TestDirichletPartition(t *testing.T) {
	im := synthImages([]int{100, 90, 80, 110, 100, 100, 95, 105, 100, 120})
	ds, err := Dirichlet(im, DirichletConfig{Clients: 8, New: 2, Alpha: 0.4, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Existing) != 8 || len(ds.New) != 2 || ds.Classes != 10 {
		t.Fatalf("%d existing, %d new", len(ds.Existing), len(ds.New))
	}
	ex, nw := clientSources(t, im, ds)
	total := 0
	for _, c := range append(ex, nw...) {
		m := len(c[0]) + len(c[1])
		if m < 10 {
			t.Errorf("client with %d images, below the minimum 10", m)
		}
		if want := int(math.Round(0.2 * float64(m))); len(c[1]) != max(want, 1) {
			t.Errorf("client with %d images has %d test images, want %d", m, len(c[1]), want)
		}
		total += m
	}
	if total != im.N() {
		t.Fatalf("%d of %d images used", total, im.N())
	}
	// The cap: a random subset of exactly MaxImages images.
	ds, err = Dirichlet(im, DirichletConfig{Clients: 8, New: 2, Alpha: 0.4, MaxImages: 400, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ex, nw = clientSources(t, im, ds)
	total = 0
	for _, c := range append(ex, nw...) {
		total += len(c[0]) + len(c[1])
	}
	if total != 400 {
		t.Fatalf("cap 400: %d images used", total)
	}
}

// α controls heterogeneity: the mean over clients of the largest label
// share is near 1 for a tiny α and near 1/C for a huge one.
func TestDirichletHeterogeneity(t *testing.T) {
	im := synthImages(uniform(10, 300))
	share := func(alpha float64) float64 {
		ds, err := Dirichlet(im, DirichletConfig{Clients: 10, Alpha: alpha, MinSamples: 2, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, c := range ds.Existing {
			y := append(slices.Clone(c.Y), c.YTest...)
			var cnt [10]int
			for _, v := range y {
				cnt[int(v)]++
			}
			s += float64(slices.Max(cnt[:])) / float64(len(y))
		}
		return s / float64(len(ds.Existing))
	}
	if lo, hi := share(1000), share(0.05); lo > 0.2 || hi < 0.6 {
		t.Fatalf("mean top-label share %v at α = 1000, %v at α = 0.05", lo, hi)
	}
}

func TestDirichletRedrawsAndLimits(t *testing.T) {
	im := synthImages(uniform(10, 20))
	redrawn := false
	for s := uint64(1); s <= 40 && !redrawn; s++ {
		ds, err := Dirichlet(im, DirichletConfig{Clients: 10, Alpha: 0.2, MinSamples: 10, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ds.Existing {
			if n := len(c.Y) + len(c.YTest); n < 10 {
				t.Fatalf("seed %d: client with %d images", s, n)
			}
		}
		redrawn = len(ds.Notes) == 1 &&
			strings.Contains(ds.Notes[0], "redrawn because a client had fewer than 10 images")
	}
	if !redrawn {
		t.Fatal("no seed needed a redraw: the test does not exercise the rule")
	}
	// Two labels cannot fill five clients at a tiny α.
	_, err := Dirichlet(synthImages(uniform(2, 10)), DirichletConfig{Clients: 5, Alpha: 1e-4, MinSamples: 2})
	if err == nil || !strings.Contains(err.Error(), "in 1000 draws no partition") {
		t.Fatalf("impossible partition: %v", err)
	}
	for _, c := range []DirichletConfig{
		{Clients: 0, Alpha: 1},
		{Clients: 2, New: -1, Alpha: 1},
		{Clients: 2, Alpha: 0},
		{Clients: 2, Alpha: math.NaN()},
		{Clients: 2, Alpha: math.Inf(1)},
		{Clients: 2, Alpha: 1, TestFraction: 1},
		{Clients: 2, Alpha: 1, TestFraction: -0.1},
		{Clients: 2, Alpha: 1, MinSamples: 1},
		{Clients: 2, Alpha: 1, MaxImages: -1},
		{Clients: 30, Alpha: 1}, // 200 images < 30 × 10
	} {
		if _, err := Dirichlet(im, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Gamma variates (drawn as logarithms) have mean and variance a; the
// Dirichlet's marginals are Beta(α, (K−1)α) with mean 1/K and variance
// (1/K)(1−1/K)/(Kα+1).
func TestGammaAndDirichletMoments(t *testing.T) {
	const n = 200000
	r := rng(1, 2)
	for _, a := range []float64{0.05, 0.4, 1, 2.5} {
		var s, s2 float64
		for range n {
			x := math.Exp(logGammaVariate(a, r))
			s += x
			s2 += x * x
		}
		mean := s / n
		v := s2/n - mean*mean
		// Standard errors: √(a/n) for the mean; √((μ4−σ⁴)/n) for the
		// variance, μ4 = 3a² + 6a.
		if math.Abs(mean-a) > 5*math.Sqrt(a/n) || math.Abs(v-a) > 5*math.Sqrt((2*a*a+6*a)/n) {
			t.Errorf("Gamma(%v): mean %v variance %v", a, mean, v)
		}
	}
	const K = 5
	for _, alpha := range []float64{0.4, 3} {
		p := make([]float64, K)
		var s, s2 float64
		for range n / 10 {
			dirichletVariate(p, alpha, r)
			sum := 0.0
			for _, v := range p {
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("proportions sum to %v", sum)
			}
			s += p[2]
			s2 += p[2] * p[2]
		}
		m := float64(n / 10)
		mean, v := s/m, s2/m-(s/m)*(s/m)
		wantV := (1.0 / K) * (1 - 1.0/K) / (K*alpha + 1)
		if math.Abs(mean-1.0/K) > 5*math.Sqrt(wantV/m) || math.Abs(v-wantV)/wantV > 0.05 {
			t.Errorf("Dirichlet(%v): marginal mean %v variance %v, want %v %v", alpha, mean, v, 1.0/K, wantV)
		}
	}
	// A tiny α, whose Gamma variates underflow, still gives a proper draw.
	p := make([]float64, K)
	dirichletVariate(p, 1e-3, r)
	sum := 0.0
	for _, v := range p {
		if !(v >= 0) {
			t.Fatalf("proportion %v", v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("α = 1e-3: proportions %v", p)
	}
}

// Labels5Client and DirichletClient build one existing client's data, the
// same to the bit as that client of the whole split; out-of-range clients
// are refused.
func TestSplitClientAlone(t *testing.T) {
	im := synthImages(uniform(6, 60))
	l5 := Labels5Config{Train: 3, Test: 2, New: 2, MaxImages: 300, Seed: 4}
	dc := DirichletConfig{Clients: 4, New: 1, Alpha: 0.5, MinSamples: 4, Seed: 9}
	whole5, err := Labels5(im, l5)
	if err != nil {
		t.Fatal(err)
	}
	wholeD, err := Dirichlet(im, dc)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, i int, a, b *ClientData) {
		eq := func(x, y []float64) bool {
			return len(x) == len(y) &&
				slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
		}
		if !eq(a.X, b.X) || !eq(a.Y, b.Y) || !eq(a.XTest, b.XTest) || !eq(a.YTest, b.YTest) || len(a.Y) == 0 {
			t.Errorf("%s client %d alone differs from the whole split's (%d vs %d rows)", name, i, len(a.Y), len(b.Y))
		}
	}
	for i := range whole5.Existing {
		c, err := Labels5Client(im, l5, i)
		if err != nil {
			t.Fatal(err)
		}
		same("labels5", i, c, &whole5.Existing[i])
	}
	for i := range wholeD.Existing {
		c, err := DirichletClient(im, dc, i)
		if err != nil {
			t.Fatal(err)
		}
		same("dirichlet", i, c, &wholeD.Existing[i])
	}
	for _, i := range []int{-1, len(whole5.Existing)} {
		if _, err := Labels5Client(im, l5, i); err == nil || !strings.Contains(err.Error(), "client") {
			t.Errorf("labels5 client %d: %v", i, err)
		}
	}
	if _, err := DirichletClient(im, dc, 4); err == nil || !strings.Contains(err.Error(), "4 existing clients") {
		t.Errorf("dirichlet client 4: %v", err)
	}
}

// TestPixelScales checks that the symmetric scale hands out 2p/255 − 1 of
// the very rows the unit scale hands out as p/255 (both splits, training
// and test, existing and new clients), and that unknown scales are refused
// by name.
func TestPixelScales(t *testing.T) {
	im := synthImages(uniform(10, 120))
	type build func(PixelScale) (*Dataset, error)
	splits := map[string]build{
		"labels5": func(px PixelScale) (*Dataset, error) {
			return Labels5(im, Labels5Config{Train: 4, Test: 6, New: 2, Seed: 3, Pixels: px})
		},
		"dirichlet": func(px PixelScale) (*Dataset, error) {
			return Dirichlet(im, DirichletConfig{Clients: 6, New: 2, Alpha: 0.5, Seed: 3, Pixels: px})
		},
	}
	for name, b := range splits {
		def, err := b("")
		if err != nil {
			t.Fatal(name, err)
		}
		unit, err := b(PixelsUnit)
		if err != nil {
			t.Fatal(name, err)
		}
		sym, err := b(PixelsSymmetric)
		if err != nil {
			t.Fatal(name, err)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for g, cs := range [][]ClientData{unit.Existing, unit.New} {
			for c := range cs {
				for k, xs := range [][3][]float64{
					{cs[c].X, sym.client(g, c).X, def.client(g, c).X},
					{cs[c].XTest, sym.client(g, c).XTest, def.client(g, c).XTest},
				} {
					u, s, d := xs[0], xs[1], xs[2]
					if len(u) == 0 || len(u) != len(s) || !slices.Equal(u, d) {
						t.Fatalf("%s group %d client %d set %d: %d unit, %d symmetric values; default equals unit: %v",
							name, g, c, k, len(u), len(s), slices.Equal(u, d))
					}
					for j := range u {
						p := math.Round(u[j] * 255)
						if u[j] != p/255 || s[j] != (2*p-255)/255 {
							t.Fatalf("%s group %d client %d set %d value %d: unit %v, symmetric %v (pixel %v)", name, g,
								c, k, j, u[j], s[j], p)
						}
						lo, hi = min(lo, s[j]), max(hi, s[j])
					}
				}
			}
		}
		if !(lo >= -1 && hi <= 1 && lo < 0) {
			t.Errorf("%s: symmetric pixels span [%v, %v], want inside [−1, 1] with negatives", name, lo, hi)
		}
		if _, err := b("centred"); err == nil || !strings.Contains(err.Error(), `"centred"`) ||
			!strings.Contains(err.Error(), name) {
			t.Errorf("%s: unknown pixel scale: err %v, want one naming the split and the scale", name, err)
		}
	}
	if _, err := Labels5Client(im, Labels5Config{Train: 4, Test: 6, Seed: 3, Pixels: "x"}, 0); err == nil {
		t.Error("Labels5Client accepted an unknown pixel scale")
	}
}

// client is client c of group g (0 existing, 1 new).
func (ds *Dataset) client(g, c int) *ClientData {
	if g == 0 {
		return &ds.Existing[c]
	}
	return &ds.New[c]
}
