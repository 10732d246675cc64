package data

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func smallLarge(kind string) LargeConfig {
	c := DefaultLarge(kind)
	c.Clients, c.NewClients, c.Samples = 3, 2, 400
	c.Seed = 7
	return c
}

func largeCSV(t *testing.T, cfg LargeConfig) (*Large, []byte) {
	t.Helper()
	g, err := NewLarge(cfg)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, g.WriteCSV(context.Background(), &b, nil))
	return g, b.Bytes()
}

// The same configuration writes the same bytes; another seed other bytes.
func TestLargeDeterministic(t *testing.T) {
	for _, kind := range []string{LargeSmooth, LargePV} {
		t.Run(kind, func(t *testing.T) {
			cfg := smallLarge(kind)
			_, a := largeCSV(t, cfg)
			_, b := largeCSV(t, cfg)
			assert.True(t, bytes.Equal(a, b), "same seed, different bytes")
			cfg.Seed++
			_, c := largeCSV(t, cfg)
			assert.False(t, bytes.Equal(a, c), "another seed, same bytes")
		})
	}
}

// A file reads back with ReadCSV into the clients, rows and splits it was
// written with, the values to their 7 significant digits, and federates
// with the new clients held out.
func TestLargeReadsBack(t *testing.T) {
	for _, kind := range []string{LargeSmooth, LargePV} {
		t.Run(kind, func(t *testing.T) {
			cfg := smallLarge(kind)
			g, text := largeCSV(t, cfg)
			rec, err := ReadCSV(bytes.NewReader(text), "large.csv", CSVSpec{
				ClientColumn: LargeClientColumn, TargetColumn: g.Target(), SplitColumn: LargeSplitColumn})
			require.NoError(t, err)
			assert.Equal(t, g.Features(), rec.Features)
			assert.Equal(t, g.ClientIDs(), rec.Clients)
			require.Equal(t, 5*400, rec.Rows())
			assert.True(t, rec.HasSplit)
			nTest := make([]int, 5)
			r := 0
			for i := range g.ClientIDs() {
				require.NoError(t, g.Client(i, func(x []float64, y float64, test bool) error {
					require.Equal(t, i, rec.Client[r])
					for j, v := range x {
						assert.InDelta(t, v, rec.Row(r)[j], 6e-7*math.Abs(v), "row %d feature %d", r, j)
					}
					assert.InDelta(t, y, rec.Y[r], 6e-7*math.Abs(y), "row %d target", r)
					assert.Equal(t, test, rec.Test[r])
					if test {
						nTest[i]++
					}
					r++
					return nil
				}))
			}
			for i, n := range nTest {
				assert.Equal(t, 80, n, "client %d: test rows", i)
			}
			fed, err := rec.Federate(FederateConfig{NewClients: g.NewClientIDs()})
			require.NoError(t, err)
			assert.Len(t, fed.Existing, 3)
			assert.Len(t, fed.New, 2)
			assert.Equal(t, g.NewClientIDs(), fed.NewIDs)
			for _, c := range append(fed.Existing, fed.New...) {
				assert.Equal(t, 320, c.M())
				assert.Len(t, c.YTest, 80)
			}
			if kind == LargeSmooth {
				assert.Equal(t, "client,x1,x2,x3,y,split\n", string(text[:bytes.IndexByte(text, '\n')+1]))
				assert.Equal(t, []string{"client001", "client002", "client003", "new001", "new002"}, g.ClientIDs())
			} else {
				assert.Equal(t, []string{"house001", "house002", "house003", "newhouse001", "newhouse002"},
					g.ClientIDs())
				assert.Equal(t, []string{"lag_10min", "lag_20min", "lag_1h", "lag_1d", "dni", "dhi", "temperature",
					"wind", "elevation", "hour", "doy"}, g.Features())
			}
		})
	}
}

// clientRows collects client i's rows.
func clientRows(t *testing.T, g *Large, i int) (x, y []float64, test []bool) {
	t.Helper()
	require.NoError(t, g.Client(i, func(xr []float64, yr float64, tr bool) error {
		x = append(x, xr...)
		y = append(y, yr)
		test = append(test, tr)
		return nil
	}))
	return x, y, test
}

// A client's rows depend on its index and the seed, not on how many other
// clients there are; smooth's data not on the test fraction either.
func TestLargeClientsIndependent(t *testing.T) {
	for _, kind := range []string{LargeSmooth, LargePV} {
		a := smallLarge(kind)
		b := a
		b.Clients, b.NewClients = 7, 0
		ga, err := NewLarge(a)
		require.NoError(t, err)
		gb, err := NewLarge(b)
		require.NoError(t, err)
		for i := range 3 {
			xa, ya, ta := clientRows(t, ga, i)
			xb, yb, tb := clientRows(t, gb, i)
			assert.Equal(t, xa, xb, "%s client %d", kind, i)
			assert.Equal(t, ya, yb)
			assert.Equal(t, ta, tb)
		}
		// The new clients are clients Clients.. of the same streams.
		xa, _, _ := clientRows(t, ga, 3)
		xb, _, _ := clientRows(t, gb, 3)
		assert.Equal(t, xa, xb, "%s: the first new client is client 3", kind)
	}
	a := smallLarge(LargeSmooth)
	b := a
	b.TestFraction = 0.5
	ga, _ := NewLarge(a)
	gb, _ := NewLarge(b)
	xa, ya, ta := clientRows(t, ga, 1)
	xb, yb, tb := clientRows(t, gb, 1)
	assert.Equal(t, xa, xb)
	assert.Equal(t, ya, yb)
	assert.NotEqual(t, ta, tb)
	n := 0
	for _, v := range tb {
		if v {
			n++
		}
	}
	assert.Equal(t, 200, n)
}

// The clients differ (personalisation matters): their targets' means and
// their fits to one another's inputs differ beyond the noise. Checked
// crudely: the per-client means of y spread by more than the noise.
func TestLargeSmoothClientsDiffer(t *testing.T) {
	cfg := smallLarge(LargeSmooth)
	cfg.Clients, cfg.NewClients, cfg.Samples = 8, 0, 2000
	g, err := NewLarge(cfg)
	require.NoError(t, err)
	var means []float64
	for i := range 8 {
		_, y, _ := clientRows(t, g, i)
		var s float64
		for _, v := range y {
			s += v
		}
		means = append(means, s/float64(len(y)))
	}
	assert.Greater(t, slices.Max(means)-slices.Min(means), 5*cfg.Noise, "client means %v", means)
}

// PV rows: daylight only, the lags read the house's own earlier target, the
// test rows the last ones in time.
func TestLargePVRows(t *testing.T) {
	cfg := smallLarge(LargePV)
	cfg.StepMinutes = 5
	g, err := NewLarge(cfg)
	require.NoError(t, err)
	x, y, test := clientRows(t, g, 0)
	d := len(g.Features())
	require.Len(t, y, 400)
	elev := slices.Index(g.Features(), "elevation")
	lag := slices.Index(g.Features(), "lag_5min")
	require.GreaterOrEqual(t, elev, 0)
	require.Equal(t, 0, lag)
	for r := range y {
		assert.GreaterOrEqual(t, x[r*d+elev], cfg.MinElevation)
		assert.GreaterOrEqual(t, y[r], 0.0)
		if r > 0 && g.w.rows[r] == g.w.rows[r-1]+1 {
			assert.Equal(t, y[r-1], x[r*d+lag], "row %d: lag 5 min is the previous step's power", r)
		}
		assert.Equal(t, r >= 320, test[r])
	}
	assert.Greater(t, slices.Max(y), 1.0, "a house makes more than 1 kW at some point")
}

func TestLargeValidate(t *testing.T) {
	bad := map[string]func(*LargeConfig){
		"unknown Kind":          func(c *LargeConfig) { c.Kind = "tabular" },
		"Clients 0 must":        func(c *LargeConfig) { c.Clients = 0 },
		"NewClients -1":         func(c *LargeConfig) { c.NewClients = -1 },
		"100000 clients in all": func(c *LargeConfig) { c.Clients = MaxLargeClients },
		"Samples 1 must lie in": func(c *LargeConfig) { c.Samples = 1 },
		"Samples 20000001 must": func(c *LargeConfig) { c.Samples = MaxLargeSamples + 1 },
		"TestFraction 1 ":       func(c *LargeConfig) { c.TestFraction = 1 },
		"TestFraction NaN":      func(c *LargeConfig) { c.TestFraction = math.NaN() },
		"Inputs 0":              func(c *LargeConfig) { c.Inputs = 0 },
		"Noise +Inf":            func(c *LargeConfig) { c.Noise = math.Inf(1) },
		"StepMinutes 7":         func(c *LargeConfig) { c.Kind, c.StepMinutes = LargePV, 7 },
		"Year 1850":             func(c *LargeConfig) { c.Kind, c.Year = LargePV, 1850 },
		"MinElevation 70":       func(c *LargeConfig) { c.Kind, c.MinElevation = LargePV, 70 },
		"unknown Variant":       func(c *LargeConfig) { c.Kind, c.Variant = LargePV, "n" },
		"more days than 2095–": func(c *LargeConfig) {
			c.Kind, c.Year, c.Samples, c.StepMinutes = LargePV, 2095, 1_000_000, 60
		},
		"Inputs 101 must lie in 1…100": func(c *LargeConfig) { c.Inputs = 101 },
	}
	for want, mod := range bad {
		c := smallLarge(LargeSmooth)
		mod(&c)
		_, err := NewLarge(c)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), strings.TrimSpace(want))
	}
}

// A cancelled context stops the writing; a failing writer's error comes
// back.
func TestLargeWriteStops(t *testing.T) {
	cfg := smallLarge(LargeSmooth)
	cfg.Clients, cfg.NewClients, cfg.Samples = 2, 0, 100_000
	g, err := NewLarge(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var calls int
	err = g.WriteCSV(ctx, io.Discard, func(done, total int64) {
		calls++
		assert.Equal(t, int64(200_000), total)
		cancel()
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
	boom := errors.New("disk full")
	err = g.WriteCSV(context.Background(), failingWriter{boom}, nil)
	assert.ErrorIs(t, err, boom)
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// A million rows are written without holding them: what is allocated does
// not grow with the rows (smooth allocates nothing per row).
func TestLargeStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("a million rows")
	}
	cfg := smallLarge(LargeSmooth)
	cfg.Clients, cfg.NewClients, cfg.Samples = 2, 0, 500_000
	g, err := NewLarge(cfg)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	require.NoError(t, g.WriteCSV(context.Background(), io.Discard, nil))
	runtime.ReadMemStats(&after)
	n := g.written
	assert.Greater(t, n, int64(40_000_000), "bytes written")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated writing %d bytes", n)
}

func TestDecimalBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 999: "999 bytes", 1000: "1 kB", 1234567: "1.23 MB",
		999_999: "1e+03 kB", 5e12: "5e+03 GB"} {
		if got := DecimalBytes(n); got != want {
			t.Errorf("DecimalBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
