package data

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/pacpfl/pacpfl/option"
)

// Large federated regression data, made to be written to a CSV file row by
// row (issue 34: figures of the sparse GP at up to millions of rows per
// client) and read back by ReadCSV and Records.Federate, the --data path of
// the CLI. Two kinds:
//
//   - smooth: each client a smooth nonlinear function of a few inputs,
//     drawn around one of two shared modes of a task family, plus noise:
//     f_i(x) = a_i sin(ω_i⟨v_i, x⟩ + ψ_i) + b_i tanh(2⟨u_i, x⟩) + c_i x₁x₂ + d_i,
//     y = f_i(x) + σ_i ε, with the client's inputs x ∈ μ_i + [−1, 1]^D.
//     The directions v_i, u_i scatter around their mode's, the frequency,
//     phase, amplitudes, offset, noise and input centre μ_i vary per client,
//     so that a pooled model misses what a personalised one can learn.
//   - pv: the PV simulator (pv.go) run over whole years at a step of a few
//     minutes: city weather with a seasonal cycle, a house per client, and
//     per house the first Samples daylight steps (Sun above MinElevation)
//     from January 1 of Year on, as many years as that takes. The target is
//     the house's AC power (kW, the mean over the step), the features its
//     power 1 and 2 steps, 1 hour and 1 day before, the station's beam and
//     diffuse irradiance, the house's temperature and wind in the last
//     measured step, and the solar elevation, UTC hour and day of year of
//     the step forecast. The weather has a seasonal cycle (1 °C in
//     January, 20 °C in July, a cloudier winter): a south roof makes about
//     1,200 kWh/kWp a year (January 40, June 140), as PVGIS gives for
//     Lausanne.
//
// Every value is a pure function of the configuration: client i draws from
// PCG streams selected by StreamID from (Seed, purpose, i), so a client's
// rows do not depend on the other clients, and a generator holds one
// client's rows at a time at most (smooth: none; pv: the city weather and
// one house's series, O(steps), never O(clients × Samples)).

// Large data kinds.
const (
	LargeSmooth = "smooth"
	LargePV     = "pv"
)

// Columns of a large data file besides the features and the target.
const (
	LargeClientColumn = "client"
	LargeSplitColumn  = "split" // "train" or "test"
)

// Limits of a LargeConfig: a typing slip should not start a file of
// terabytes.
const (
	MaxLargeSamples = 20_000_000 // rows per client
	MaxLargeClients = 100_000    // existing and new clients together
	MaxLargeInputs  = 100        // smooth: D
)

// LargeConfig describes a large data set.
type LargeConfig struct {
	Kind       string // LargeSmooth or LargePV
	Clients    int    // existing clients (IDs client001…, house001…)
	NewClients int    // new clients (IDs new001…, newhouse001…), to hold out with --new-clients
	Samples    int    // rows per client, training and test rows together
	// TestFraction of each client's rows are marked test: round(F·Samples),
	// leaving at least 2 training rows. smooth: drawn at random (exactly
	// that many, from a stream of their own, so F does not change the
	// data); pv: the last rows in time, as a forecast is tested on later
	// data.
	TestFraction float64
	Seed         uint64

	// Smooth.
	Inputs int     // D, the number of inputs
	Noise  float64 // typical noise std σ (each client's is σ·e^{0.25ε})

	// PV.
	StepMinutes  int     // the simulation step, a divisor of 60 (5 or 10 for the data)
	Year         int     // the first simulated year, from January 1
	MinElevation float64 // degrees: a row is a step with the Sun above it
	Variant      string  // "s" (roofs facing south) or "ew" (east or west), as PVConfig
}

// DefaultLarge returns the defaults of a kind (any other kind: smooth's):
// 10 clients of 100,000 rows, no new clients, a test fraction of 0.2, seed
// 1; smooth with 3 inputs and noise 0.1; pv at 10 minutes from 2018 with
// the Sun above 10°, PV-EW roofs.
func DefaultLarge(kind string) LargeConfig {
	return LargeConfig{
		Kind: kind, Clients: 10, Samples: 100_000, TestFraction: 0.2, Seed: 1,
		Inputs: 3, Noise: 0.1,
		StepMinutes: 10, Year: 2018, MinElevation: 10, Variant: "ew",
	}
}

// ForeignFields are the fields that only the other kind reads (for smooth:
// StepMinutes, Year, MinElevation, Variant; for pv: Inputs, Noise), which
// c's kind ignores: a front end can refuse them rather than ignore them.
// Nil for an unknown kind.
func (c LargeConfig) ForeignFields() []string {
	switch c.Kind {
	case LargeSmooth:
		return []string{"StepMinutes", "Year", "MinElevation", "Variant"}
	case LargePV:
		return []string{"Inputs", "Noise"}
	}
	return nil
}

// fieldErr is field with value v against a rule written as format, with
// %s for the field's name and a verb for v.
func fieldErr(field, format string, v any) *option.FieldError {
	return option.Custom(largeScope, []string{field}, []any{v}, func(n []string) string {
		return fmt.Sprintf(format, n[0], v)
	})
}

// largeScope prefixes LargeConfig's errors.
const largeScope = "large data"

// Validate reports a configuration that cannot be generated as a
// *option.FieldError naming the field and the value.
func (c LargeConfig) Validate() error {
	switch {
	case c.Kind != LargeSmooth && c.Kind != LargePV:
		return fieldErr("Kind", "unknown %s %q (want "+LargeSmooth+" or "+LargePV+")", c.Kind)
	case c.Clients < 1:
		return fieldErr("Clients", "%s %d must be at least 1", c.Clients)
	case c.NewClients < 0:
		return fieldErr("NewClients", "%s %d must be ≥ 0", c.NewClients)
	case c.Clients+c.NewClients > MaxLargeClients:
		fields, values := []string{"Clients", "NewClients"}, []any{c.Clients, c.NewClients}
		return option.Custom(largeScope, fields, values, func(n []string) string {
			return fmt.Sprintf("%s %d and %s %d: at most %d clients in all", n[0], c.Clients, n[1], c.NewClients,
				MaxLargeClients)
		})
	case c.Samples < 2 || c.Samples > MaxLargeSamples:
		return fieldErr("Samples", "%s %d must lie in 2…"+strconv.Itoa(MaxLargeSamples), c.Samples)
	case !(c.TestFraction >= 0 && c.TestFraction < 1):
		return fieldErr("TestFraction", "%s %v must lie in [0, 1)", c.TestFraction)
	}
	if c.Kind == LargeSmooth {
		switch {
		case c.Inputs < 1 || c.Inputs > MaxLargeInputs:
			return fieldErr("Inputs", "%s %d must lie in 1…"+strconv.Itoa(MaxLargeInputs), c.Inputs)
		case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
			return fieldErr("Noise", "%s %v must be finite and ≥ 0", c.Noise)
		}
		return nil
	}
	switch {
	case c.StepMinutes < 1 || c.StepMinutes > 60 || 60%c.StepMinutes != 0:
		return fieldErr("StepMinutes", "%s %d must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60)",
			c.StepMinutes)
	case c.Year < 1900 || c.Year > 2099:
		return fieldErr("Year", "%s %d must lie in 1900…2099 (the solar algorithm's range)", c.Year)
	case !(c.MinElevation >= 0 && c.MinElevation < 60):
		return fieldErr("MinElevation", "%s %v must lie in [0, 60) degrees", c.MinElevation)
	case c.Variant != "s" && c.Variant != "ew":
		return fieldErr("Variant", "unknown %s %q (want s or ew)", c.Variant)
	}
	return nil
}

// TestRows is the number of test rows of each client.
func (c LargeConfig) TestRows() int {
	return min(int(math.Round(c.TestFraction*float64(c.Samples))), c.Samples-2)
}

// Large generates a large data set; see LargeConfig. Its methods may be
// called from several goroutines at once.
type Large struct {
	cfg      LargeConfig
	features []string
	target   string
	ids      []string // existing, then new

	modes [2]smoothMode // smooth

	w      *pvSpan // pv
	lags   []int   // pv: in steps
	houses []pvHouse

	written int64 // bytes the last WriteCSV wrote, for WriteSummary
}

// Stream tags.
const (
	tagLargeFamily = 0x6c676661 // "lgfa"
	tagLargeClient = 0x6c67636c // "lgcl"
	tagLargeSplit  = 0x6c677370 // "lgsp"
	tagLargeHouse  = 0x6c67686f // "lgho"
	tagLargeNoise  = 0x6c676e6f // "lgno"
	tagLargeCity   = 0x6c676369 // "lgci"
)

// NewLarge validates cfg and prepares the generator: for pv it simulates
// the city's weather over the span the samples need (about 82 bytes per
// step, 2.3 steps per row at 10°) and draws the houses. A pv generator
// and the house it writes peak at about 0.9 GB for 2,000,000 rows per
// house at 5 minutes (46 years).
func NewLarge(cfg LargeConfig) (*Large, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Large{cfg: cfg}
	n := cfg.Clients + cfg.NewClients
	width := max(3, len(strconv.Itoa(max(cfg.Clients, cfg.NewClients))))
	prefix, newPrefix := "client", "new"
	if cfg.Kind == LargePV {
		prefix, newPrefix = "house", "newhouse"
	}
	for i := range n {
		if i < cfg.Clients {
			g.ids = append(g.ids, fmt.Sprintf("%s%0*d", prefix, width, i+1))
		} else {
			g.ids = append(g.ids, fmt.Sprintf("%s%0*d", newPrefix, width, i-cfg.Clients+1))
		}
	}
	switch cfg.Kind {
	case LargeSmooth:
		for j := range cfg.Inputs {
			g.features = append(g.features, "x"+strconv.Itoa(j+1))
		}
		g.target = "y"
		g.modes = smoothModes(cfg)
	case LargePV:
		if err := g.preparePV(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Config returns the configuration.
func (g *Large) Config() LargeConfig { return g.cfg }

// Features returns the feature column names, in column order.
func (g *Large) Features() []string { return append([]string(nil), g.features...) }

// Target returns the target column name.
func (g *Large) Target() string { return g.target }

// Header returns the CSV header: client, the features, the target, split.
func (g *Large) Header() []string {
	h := append([]string{LargeClientColumn}, g.features...)
	return append(h, g.target, LargeSplitColumn)
}

// ClientIDs returns every client's ID, the existing clients first.
func (g *Large) ClientIDs() []string { return append([]string(nil), g.ids...) }

// NewClientIDs returns the new clients' IDs (the value of --new-clients).
func (g *Large) NewClientIDs() []string { return append([]string(nil), g.ids[g.cfg.Clients:]...) }

// Rows returns the number of data rows, header excluded.
func (g *Large) Rows() int64 { return int64(len(g.ids)) * int64(g.cfg.Samples) }

// Client streams the rows of client i (0 ≤ i < Clients+NewClients, the
// order of ClientIDs) to emit, in file order: x holds the features (reused
// between calls: copy it to keep it), y the target, test the split. An
// error from emit stops the client and is returned.
func (g *Large) Client(i int, emit func(x []float64, y float64, test bool) error) error {
	if i < 0 || i >= len(g.ids) {
		return fmt.Errorf("large data: client %d of %d", i, len(g.ids))
	}
	if g.cfg.Kind == LargePV {
		return g.pvClient(i, emit)
	}
	return g.smoothClient(i, emit)
}

// WriteCSV writes the whole data set as CSV to w: the header, then every
// client's rows, client after client. progress, if not nil, is called
// every 65,536 rows and at the end with the rows written and the total;
// ctx stops the writing early (its error is returned). Numbers have 7
// significant digits.
func (g *Large) WriteCSV(ctx context.Context, w io.Writer, progress func(done, total int64)) error {
	cw := &countingWriter{w: w}
	defer func() { g.written = cw.n }()
	bw := bufio.NewWriterSize(cw, 1<<20)
	for i, h := range g.Header() {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(h)
	}
	bw.WriteByte('\n')
	var done int64
	total := g.Rows()
	line := make([]byte, 0, 256)
	for i, id := range g.ids {
		err := g.Client(i, func(x []float64, y float64, test bool) error {
			line = append(line[:0], id...)
			for _, v := range x {
				line = append(line, ',')
				line = strconv.AppendFloat(line, v, 'g', 7, 64)
			}
			line = append(line, ',')
			line = strconv.AppendFloat(line, y, 'g', 7, 64)
			if test {
				line = append(line, ",test\n"...)
			} else {
				line = append(line, ",train\n"...)
			}
			if _, err := bw.Write(line); err != nil {
				return err
			}
			if done++; done&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if progress != nil {
					progress(done, total)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if progress != nil {
		progress(done, total)
	}
	return nil
}

// splitter marks exactly test of n rows as test rows, each subset of that
// size equally likely, one row at a time (selection sampling, Knuth's
// Algorithm S): O(1) memory.
type splitter struct {
	rng       *rand.Rand
	left, ask int // rows left, test rows still to mark
}

func (s *splitter) next() bool {
	t := s.ask > 0 && s.rng.Float64()*float64(s.left) < float64(s.ask)
	s.left--
	if t {
		s.ask--
	}
	return t
}

// smoothMode is one mode of the smooth task family.
type smoothMode struct {
	v, u  []float64 // unit directions of the sine and tanh terms
	omega float64
}

// unit draws a standard normal vector of length d and normalises it.
func unit(rng *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for {
		var s float64
		for j := range v {
			v[j] = rng.NormFloat64()
			s += v[j] * v[j]
		}
		if s > 1e-12 {
			s = math.Sqrt(s)
			for j := range v {
				v[j] /= s
			}
			return v
		}
	}
}

func smoothModes(cfg LargeConfig) [2]smoothMode {
	rng := rand.New(rand.NewPCG(cfg.Seed, StreamID(tagLargeFamily)))
	var m [2]smoothMode
	for k, omega := range []float64{2.5, 4} {
		m[k] = smoothMode{v: unit(rng, cfg.Inputs), u: unit(rng, cfg.Inputs), omega: omega}
	}
	return m
}

// perturb returns base + s·ε normalised to unit length (ε standard normal).
func perturb(rng *rand.Rand, base []float64, s float64) []float64 {
	v := make([]float64, len(base))
	for {
		var n float64
		for j, b := range base {
			v[j] = b + s*rng.NormFloat64()
			n += v[j] * v[j]
		}
		if n > 1e-12 {
			n = math.Sqrt(n)
			for j := range v {
				v[j] /= n
			}
			return v
		}
	}
}

func (g *Large) smoothClient(i int, emit func(x []float64, y float64, test bool) error) error {
	cfg := g.cfg
	d := cfg.Inputs
	rng := rand.New(rand.NewPCG(cfg.Seed, StreamID(tagLargeClient, uint64(i))))
	mode := g.modes[i%2]
	// The client's task: its draws come first, in this fixed order.
	mu := make([]float64, d)
	for j := range mu {
		mu[j] = 0.25 * rng.NormFloat64()
	}
	v := perturb(rng, mode.v, 0.25)
	u := perturb(rng, mode.u, 0.25)
	omega := mode.omega * math.Exp(0.1*rng.NormFloat64())
	psi := 0.3 * rng.NormFloat64()
	a := math.Exp(0.2 * rng.NormFloat64())
	b := 0.7 + 0.2*rng.NormFloat64()
	c := 0.5 + 0.2*rng.NormFloat64()
	off := 0.3 * rng.NormFloat64()
	sigma := cfg.Noise * math.Exp(0.25*rng.NormFloat64())
	sp := splitter{rng: rand.New(rand.NewPCG(cfg.Seed, StreamID(tagLargeSplit, uint64(i)))), left: cfg.Samples,
		ask: cfg.TestRows()}
	x := make([]float64, d)
	for range cfg.Samples {
		var sv, su float64
		for j := range x {
			x[j] = mu[j] + 2*rng.Float64() - 1
			sv += v[j] * x[j]
			su += u[j] * x[j]
		}
		f := a*math.Sin(omega*sv+psi) + b*math.Tanh(2*su) + off
		if d >= 2 {
			f += c * x[0] * x[1]
		}
		y := f + sigma*rng.NormFloat64()
		if err := emit(x, y, sp.next()); err != nil {
			return err
		}
	}
	return nil
}

// pvSpan is the city's weather at a step of a few minutes from January 1 of
// a year, and the steps that are rows (the Sun above the minimum
// elevation, a day of history for the lags).
type pvSpan struct {
	start    time.Time
	step     time.Duration
	perHour  int // steps per hour
	n        int
	sun      []SolarPosition
	cloudZ   []float64
	temp     []float64
	windLog  []float64
	dni, dhi []float64
	doy      []int16
	rows     []int32 // the first Samples row steps
}

// pvSeason is +1 in mid-July and −1 in mid-January.
func pvSeason(doy int) float64 { return math.Cos(2 * math.Pi * float64(doy-196) / 365.25) }

// pvCloudShift is the shift of the cloud cover's logistic: June–July's
// cloudShift in summer (cover about 0.58), more clouds in winter (about
// 0.75, the stratus of the Swiss plateau).
func pvCloudShift(doy int) float64 { return cloudShift + 0.4*(1-pvSeason(doy)) }

func (g *Large) preparePV() error {
	cfg := g.cfg
	per := 60 / cfg.StepMinutes
	day := 24 * per
	g.lags = []int{1}
	for _, l := range []int{2, per, day} {
		if l > g.lags[len(g.lags)-1] {
			g.lags = append(g.lags, l)
		}
	}
	for _, l := range g.lags {
		g.features = append(g.features, "lag_"+pvDuration(l*cfg.StepMinutes))
	}
	g.features = append(g.features, "dni", "dhi", "temperature", "wind", "elevation", "hour", "doy")
	g.target = "power"
	w, err := simulateSpan(cfg, day)
	if err != nil {
		return err
	}
	g.w = w
	for i := range len(g.ids) {
		g.houses = append(g.houses,
			drawHouse(rand.New(rand.NewPCG(cfg.Seed, StreamID(tagLargeHouse, uint64(i)))), cfg.Variant))
	}
	return nil
}

// pvDuration names a number of minutes: 5min, 1h, 1d.
func pvDuration(minutes int) string {
	switch {
	case minutes%1440 == 0:
		return strconv.Itoa(minutes/1440) + "d"
	case minutes%60 == 0:
		return strconv.Itoa(minutes/60) + "h"
	}
	return strconv.Itoa(minutes) + "min"
}

// simulateSpan simulates whole days of city weather until they hold
// cfg.Samples row steps (the first day is history for the lags). The
// hourly AR(1) persistences of simulateWeather hold per hour: a step of
// s hours uses ρ^s.
func simulateSpan(cfg LargeConfig, day int) (*pvSpan, error) {
	per := 60 / cfg.StepMinutes
	w := &pvSpan{start: time.Date(cfg.Year, 1, 1, 0, 0, 0, 0, time.UTC),
		step: time.Duration(cfg.StepMinutes) * time.Minute, perHour: per}
	rng := rand.New(rand.NewPCG(cfg.Seed, StreamID(tagLargeCity, uint64(cfg.Year), uint64(cfg.StepMinutes))))
	h := 1 / float64(per) // the step in hours
	rc, rw := math.Pow(cloudAR, h), math.Pow(0.9, h)
	sc, sw := math.Sqrt(1-rc*rc), math.Sqrt(1-rw*rw)
	z, wind, anomaly := rng.NormFloat64(), rng.NormFloat64(), 2.5*rng.NormFloat64()
	end := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for t := 0; len(w.rows) < cfg.Samples; t++ {
		at := w.start.Add(time.Duration(t)*w.step + w.step/2) // the middle of the step
		if t%day == 0 && !at.Before(end) {
			return nil, fmt.Errorf("large data: %d pv samples per house need more days than %d–2099 hold at %d "+
				"minutes and the Sun above %g°", cfg.Samples, cfg.Year, cfg.StepMinutes, cfg.MinElevation)
		}
		z = rc*z + sc*rng.NormFloat64()
		wind = rw*wind + sw*rng.NormFloat64()
		if t%day == 0 {
			anomaly = 0.7*anomaly + 2.5*math.Sqrt(1-0.49)*rng.NormFloat64()
		}
		doy := at.YearDay()
		season := pvSeason(doy)
		cover := logistic(cloudScale*z + pvCloudShift(doy))
		local := float64(t%day)/float64(per) + 1 + 0.5*h // UTC+1, the middle of the step
		// 1 °C in mid-January, 20 °C in mid-July; a daily swing of ±3 °C
		// in winter to ±5 °C in summer peaking mid-afternoon, damped under
		// clouds; clouds cool the day.
		temp := 10.5 + 9.5*season + (4+season)*(1-0.5*cover)*math.Sin(2*math.Pi*(local-9)/24) - 3*cover + anomaly
		sun := SunPosition(at, pvLat, pvLon, pvPressure, temp)
		ghi := ClearSkyGHI(sun.Zenith) * CloudAttenuation(cover)
		dni, dhi := ErbsSplit(ghi, sun.Zenith, doy)
		w.sun = append(w.sun, sun)
		w.cloudZ = append(w.cloudZ, z)
		w.temp = append(w.temp, temp)
		w.windLog = append(w.windLog, 0.8+0.45*wind)
		w.dni = append(w.dni, dni)
		w.dhi = append(w.dhi, dhi)
		w.doy = append(w.doy, int16(doy))
		if t >= day && sun.Elevation >= cfg.MinElevation {
			w.rows = append(w.rows, int32(t))
		}
	}
	w.n = len(w.sun)
	return w, nil
}

// simulateSpan runs the house over the span: power (kW, the mean over each
// step), its temperature and wind. As pvHouse.simulate, with the hourly
// persistences of the local perturbations taken to the step.
func (hs pvHouse) simulateSpan(w *pvSpan, rng *rand.Rand) (power, temp, wind []float64) {
	power, temp, wind = make([]float64, w.n), make([]float64, w.n), make([]float64, w.n)
	h := 1 / float64(w.perHour)
	rl, rt := math.Pow(0.9, h), math.Pow(0.95, h)
	sl, st := math.Sqrt(1-rl*rl), math.Sqrt(1-rt*rt)
	local, tLocal, wLocal := 0.0, 0.0, 0.0
	for t := range w.n {
		local = rl*local + sl*rng.NormFloat64()
		tLocal = rt*tLocal + st*rng.NormFloat64()
		wLocal = rl*wLocal + sl*rng.NormFloat64()
		temp[t] = w.temp[t] + 0.5*tLocal
		wind[t] = math.Exp(w.windLog[t] + 0.1*wLocal)
		sun := w.sun[t]
		if sun.Elevation <= 0 {
			continue
		}
		doy := int(w.doy[t])
		cover := logistic(cloudScale*(w.cloudZ[t]+0.25*local) + pvCloudShift(doy))
		ghi := ClearSkyGHI(sun.Zenith) * CloudAttenuation(cover)
		dni, dhi := ErbsSplit(ghi, sun.Zenith, doy)
		blocked := hs.obsHeight > 0 && sun.Elevation < hs.obsHeight &&
			math.Abs(angleDiff(sun.Azimuth, hs.obsAz)) < hs.obsWidth/2
		poa := PlaneOfArray(sun, hs.tilt, hs.azimuth, dni, dhi, ghi, blocked)
		cell := temp[t] + poa/(25+6.84*wind[t]) // Faiman
		dc := hs.kWp * poa / 1000 * (1 + hs.gamma*(cell-25)) * hs.losses
		ac := math.Min(0.96*dc, hs.inverter)
		power[t] = math.Max(0, ac*(1+0.03*rng.NormFloat64()))
	}
	return power, temp, wind
}

func (g *Large) pvClient(i int, emit func(x []float64, y float64, test bool) error) error {
	w := g.w
	power, temp, wind := g.houses[i].simulateSpan(w,
		rand.New(rand.NewPCG(g.cfg.Seed, StreamID(tagLargeNoise, uint64(i)))))
	x := make([]float64, len(g.features))
	firstTest := len(w.rows) - g.cfg.TestRows()
	day := 24 * w.perHour
	for r, t1 := range w.rows {
		t1 := int(t1)
		k := 0
		for _, l := range g.lags {
			x[k] = power[t1-l]
			k++
		}
		t := t1 - 1 // the last measured step
		x[k], x[k+1], x[k+2], x[k+3] = w.dni[t], w.dhi[t], temp[t], wind[t]
		x[k+4] = w.sun[t1].Elevation
		x[k+5] = float64(t1%day) / float64(w.perHour) // UTC hour at the step's start
		x[k+6] = float64(w.doy[t1])
		if err := emit(x, power[t1], r >= firstTest); err != nil {
			return err
		}
	}
	return nil
}
