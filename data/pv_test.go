package data

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/option"
)

// TestPVSanity: daily energy of a 1 kWp south roof in June–July in the
// range PVGIS gives for Lausanne (about 5 kWh/kWp/day; we accept 3.5–6.5),
// east roofs peaking before solar noon (≈ 11:35 UTC) and west roofs after.
func TestPVSanity(t *testing.T) {
	w := simulateWeather(2018, 1)
	base := pvHouse{kWp: 1, tilt: 30, azimuth: 180, gamma: -0.004, losses: 0.86, inverter: 10}
	profile := func(az float64) (daily float64, peak int) {
		h := base
		h.azimuth = az
		s := h.simulate(w, rand.New(rand.NewPCG(1, 1)))
		prof := make([]float64, 24)
		for t := 31 * 24; t < pvHours; t++ {
			daily += s.power[t] / 61
			prof[t%24] += s.power[t]
		}
		for i := range prof {
			if prof[i] > prof[peak] {
				peak = i
			}
		}
		return daily, peak
	}
	south, sPeak := profile(180)
	if south < 3.5 || south > 6.5 {
		t.Errorf("south roof: %.2f kWh/kWp/day, outside 3.5–6.5", south)
	}
	if sPeak < 10 || sPeak > 12 {
		t.Errorf("south roof peaks in hour %d UTC, want 10–12", sPeak)
	}
	east, ePeak := profile(90)
	west, wPeak := profile(270)
	if ePeak >= 11 || wPeak <= 11 {
		t.Errorf("east roof peaks at hour %d UTC, west at %d; want before and after 11:35", ePeak, wPeak)
	}
	if east > south || west > south || east < 0.7*south {
		t.Errorf("east %.2f and west %.2f kWh/kWp/day against south %.2f", east, west, south)
	}
}

func TestPVDataset(t *testing.T) {
	cfg := DefaultPV()
	cfg.Existing, cfg.New, cfg.Seed = 6, 4, 3
	ds, err := PV(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ds.D != 15 || len(ds.Existing) != 6 || len(ds.New) != 4 {
		t.Fatalf("D = %d, %d existing, %d new; want 15, 6, 4", ds.D, len(ds.Existing), len(ds.New))
	}
	modes := map[int]int{}
	for i, c := range append(append([]ClientData(nil), ds.Existing...), ds.New...) {
		modes[c.Mode]++
		if len(c.Y) != 150 || len(c.X) != 150*15 {
			t.Fatalf("house %d: %d training rows", i, len(c.Y))
		}
		if len(c.YTest) < 600 || len(c.XTest) != 15*len(c.YTest) {
			t.Fatalf("house %d: %d test rows", i, len(c.YTest))
		}
		// Standardised with its own training statistics.
		var mean, sq float64
		for _, v := range c.Y {
			mean += v / 150
		}
		for _, v := range c.Y {
			sq += (v - mean) * (v - mean) / 150
		}
		if math.Abs(mean) > 1e-9 || math.Abs(sq-1) > 1e-9 {
			t.Errorf("house %d: target mean %v variance %v after standardising", i, mean, sq)
		}
		for _, v := range append(append([]float64(nil), c.X...), c.XTest...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("house %d: non-finite feature", i)
			}
		}
	}
	if modes[0] == 0 || modes[1] == 0 {
		t.Errorf("PV-EW modes %v: want both east and west roofs", modes)
	}
	if !strings.Contains(strings.Join(ds.Notes, " "), "generation lag 1h") {
		t.Errorf("lag 1 h not among the chosen lags: %v", ds.Notes)
	}
	// Deterministic in the seed, different across seeds.
	again, _ := PV(cfg)
	if again.Existing[2].Y[7] != ds.Existing[2].Y[7] || again.New[1].XTest[99] != ds.New[1].XTest[99] {
		t.Error("same seed, different data")
	}
	cfg.Seed = 4
	other, _ := PV(cfg)
	if other.Existing[2].Y[7] == ds.Existing[2].Y[7] {
		t.Error("different seeds, same data")
	}
	cfg.Variant, cfg.Date = "s", true
	s, err := PV(cfg)
	if err != nil || s.Name != "pv-s" || s.D != 16 {
		t.Fatalf("pv-s with the date: %v", err)
	}
	for _, c := range s.Existing {
		if c.Mode != 0 {
			t.Fatal("PV-S house in a second mode")
		}
		// Test features lie within the training range (clipped) once
		// standardised the same way.
		for j := 0; j < s.D; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for r := 0; r < len(c.Y); r++ {
				lo, hi = math.Min(lo, c.X[r*s.D+j]), math.Max(hi, c.X[r*s.D+j])
			}
			for r := 0; r < len(c.YTest); r++ {
				if v := c.XTest[r*s.D+j]; v < lo-1e-12 || v > hi+1e-12 {
					t.Fatalf("test feature %d = %v outside the training range [%v, %v]", j, v, lo, hi)
				}
			}
		}
	}
}

func TestPVLagsFollowPACF(t *testing.T) {
	// An AR(2) series on lags 1 and 24: the PACF picks exactly those.
	rng := rand.New(rand.NewPCG(5, 5))
	s := make([]float64, 5000)
	for t := 24; t < len(s); t++ {
		s[t] = 0.5*s[t-1] + 0.4*s[t-24] + rng.NormFloat64()
	}
	got := pacfLags([][]float64{s[100:]}, 2)
	if len(got) != 2 || got[0] != 1 || got[1] != 24 {
		t.Errorf("lags %v, want [1 24]", got)
	}
}

func TestPVConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mod   func(*PVConfig)
		field string // "": refused by PV, not Validate
	}{
		{func(c *PVConfig) { c.Variant = "north" }, "Variant"},
		{func(c *PVConfig) { c.Existing = 0 }, "Existing"},
		{func(c *PVConfig) { c.New = -1 }, "New"},
		{func(c *PVConfig) { c.Train = 1 }, "Train"},
		{func(c *PVConfig) { c.Train = 2000 }, ""}, // June and July give about 790
		{func(c *PVConfig) { c.Lags = 400 }, "Lags"},
		{func(c *PVConfig) { c.MinElevation = math.NaN() }, "MinElevation"},
		{func(c *PVConfig) { c.Year = 1500 }, "Year"},
	} {
		cfg := DefaultPV()
		cfg.Existing, cfg.New = 2, 0
		tc.mod(&cfg)
		if _, err := PV(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
		var fe *option.FieldError
		err := cfg.Validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("config %+v: Validate %v", cfg, err)
		case tc.field != "" && (!errors.As(err, &fe) || len(fe.Fields) != 1 || fe.Fields[0] != tc.field):
			t.Errorf("config %+v: Validate %v, want a FieldError on %s", cfg, err, tc.field)
		}
	}
	if err := DefaultPV().Validate(); err != nil {
		t.Errorf("the default: %v", err)
	}
}

func TestPVKey(t *testing.T) {
	c := DefaultPV()
	if got := c.Key(); got != "pv-ew-150" {
		t.Errorf("default key %q", got)
	}
	c.Variant, c.Train = "s", 610
	if got := c.Key(); got != "pv-s-610" {
		t.Errorf("key %q", got)
	}
}
