package data

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// FederateConfig says how Records become a federated Dataset.
type FederateConfig struct {
	// NewClients are the IDs of the clients held out as new clients: the
	// server never sees them; their training rows are their own data S̃_ι.
	NewClients []string
	// TestFraction of each client's rows, drawn at random, are test rows
	// (round(TestFraction·m), leaving at least MinTrain training rows).
	// Ignored when the records have a split column, which decides.
	TestFraction float64
	Seed         uint64
	// MinTrain is the fewest training rows a client may have (0: 2).
	MinTrain int
}

// ClientRows are the rows (indices into Records) of one client: its training
// rows (S_i, or a new client's own data) and its test rows, in file order.
type ClientRows struct{ Train, Test []int }

// Federated is a Dataset made from Records, with what ties it to the file.
type Federated struct {
	*Dataset
	Scaling      Scaling
	Features     []string
	Target       string
	ClassNames   []string // classification: the label of each class index
	ExistingIDs  []string
	NewIDs       []string
	ExistingRows []ClientRows
	NewRows      []ClientRows
}

// Scaling is a standardisation x ← (x − XMean)/XStd, y ← (y − YMean)/YStd
// (YMean = 0, YStd = 1 for classification: labels are not scaled).
type Scaling struct {
	XMean, XStd []float64
	YMean, YStd float64
}

// ScaleX standardises the rows of x (row-major, len(XMean) columns) in place.
func (s Scaling) ScaleX(x []float64) {
	d := len(s.XMean)
	for i := range x {
		j := i % d
		x[i] = (x[i] - s.XMean[j]) / s.XStd[j]
	}
}

// ScaleY standardises y in place.
func (s Scaling) ScaleY(y []float64) {
	for i := range y {
		y[i] = (y[i] - s.YMean) / s.YStd
	}
}

// UnscaleY maps a standardised target back to the data's units.
func (s Scaling) UnscaleY(v float64) float64 { return s.YMean + s.YStd*v }

// Check reports a scaling that cannot be applied: lengths differ, or a
// mean is not finite, or a std not positive and finite.
func (s Scaling) Check(d int) error {
	if len(s.XMean) != d || len(s.XStd) != d {
		return fmt.Errorf("standardisation has %d means and %d stds for %d features", len(s.XMean), len(s.XStd), d)
	}
	ok := func(m, sd float64) bool {
		return !math.IsNaN(m) && !math.IsInf(m, 0) && sd > 0 && !math.IsInf(sd, 0)
	}
	for j := range s.XMean {
		if !ok(s.XMean[j], s.XStd[j]) {
			return fmt.Errorf("standardisation of feature %d: mean %v, std %v", j+1, s.XMean[j], s.XStd[j])
		}
	}
	if !ok(s.YMean, s.YStd) {
		return fmt.Errorf("standardisation of the target: mean %v, std %v", s.YMean, s.YStd)
	}
	return nil
}

// ClientStream is the random-stream index of a client ID: a hash of the ID,
// so that what is drawn for a client does not depend on the other clients
// or on the order of the file's rows.
func ClientStream(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// Federate splits the records into existing and new clients, each into
// training and test rows, and standardises inputs (and a regression target)
// with the mean and population std of the pooled existing-client training
// rows, as for Polynomial. Errors name the client and its rows.
func (r *Records) Federate(cfg FederateConfig) (*Federated, error) {
	minTrain := cfg.MinTrain
	if minTrain <= 0 {
		minTrain = 2
	}
	if !(cfg.TestFraction >= 0 && cfg.TestFraction < 1) {
		return nil, fmt.Errorf("test fraction %v must lie in [0, 1)", cfg.TestFraction)
	}
	for i := range r.Y {
		if math.IsNaN(r.Y[i]) {
			return nil, fmt.Errorf("%s:%d: no target", r.Source, r.Line[i])
		}
	}
	isNew := map[string]bool{}
	known := map[string]bool{}
	for _, id := range r.Clients {
		known[id] = true
	}
	for i, id := range cfg.NewClients {
		if !known[id] {
			return nil,
				fmt.Errorf("new client %q is not in %s (its clients are %s)", id, r.Source, quoteList(r.Clients))
		}
		if slices.Contains(cfg.NewClients[:i], id) {
			return nil, fmt.Errorf("new client %q is listed twice", id)
		}
		isNew[id] = true
	}
	if len(cfg.NewClients) == len(r.Clients) {
		return nil,
			fmt.Errorf("every client of %s is a new client: training needs at least one existing client", r.Source)
	}
	byClient := make([][]int, len(r.Clients))
	for i, c := range r.Client {
		byClient[c] = append(byClient[c], i)
	}
	f := &Federated{Features: r.Features, Target: r.Target, ClassNames: r.Classes}
	ds := &Dataset{Name: r.Source, D: r.D()}
	if r.Task == Classification {
		ds.Classes = len(r.Classes)
		if ds.Classes < 2 {
			return nil, fmt.Errorf("%s: the target %q has %d class(es) %s; classification needs at least 2", r.Source,
				r.Target, ds.Classes, quoteList(r.Classes))
		}
	}
	for c, rows := range byClient {
		id := r.Clients[c]
		var cr ClientRows
		if r.HasSplit {
			for _, i := range rows {
				if r.Test[i] {
					cr.Test = append(cr.Test, i)
				} else {
					cr.Train = append(cr.Train, i)
				}
			}
		} else {
			nTest := min(int(math.Round(cfg.TestFraction*float64(len(rows)))), max(0, len(rows)-minTrain))
			rng := rand.New(rand.NewPCG(cfg.Seed, StreamID(0x63737673706c6974, ClientStream(id)))) // "csvsplit"
			test := make([]bool, len(rows))
			for _, j := range rng.Perm(len(rows))[:nTest] {
				test[j] = true
			}
			for j, i := range rows {
				if test[j] {
					cr.Test = append(cr.Test, i)
				} else {
					cr.Train = append(cr.Train, i)
				}
			}
		}
		if len(cr.Train) < minTrain {
			kind := "existing"
			if isNew[id] {
				kind = "new"
			}
			return nil, fmt.Errorf("%s: %s client %q has %d training row(s) (%d row(s) in all, the first on line "+
				"%d); a client needs at least %d: add rows, merge it with another, or remove it from the file",
				r.Source, kind, id, len(cr.Train), len(rows), r.Line[rows[0]], minTrain)
		}
		cd := ClientData{}
		for _, i := range cr.Train {
			cd.X = append(cd.X, r.Row(i)...)
			cd.Y = append(cd.Y, r.Y[i])
		}
		for _, i := range cr.Test {
			cd.XTest = append(cd.XTest, r.Row(i)...)
			cd.YTest = append(cd.YTest, r.Y[i])
		}
		if isNew[id] {
			ds.New = append(ds.New, cd)
			f.NewIDs = append(f.NewIDs, id)
			f.NewRows = append(f.NewRows, cr)
		} else {
			ds.Existing = append(ds.Existing, cd)
			f.ExistingIDs = append(f.ExistingIDs, id)
			f.ExistingRows = append(f.ExistingRows, cr)
		}
	}
	// Order the new clients as listed (the existing ones keep file order).
	order := make([]int, len(f.NewIDs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return slices.Index(cfg.NewClients, f.NewIDs[a]) - slices.Index(cfg.NewClients, f.NewIDs[b])
	})
	newDS, newIDs, newRows := make([]ClientData, len(order)), make([]string, len(order)), make([]ClientRows, len(order))
	for i, o := range order {
		newDS[i], newIDs[i], newRows[i] = ds.New[o], f.NewIDs[o], f.NewRows[o]
	}
	ds.New, f.NewIDs, f.NewRows = newDS, newIDs, newRows
	ds.standardise()
	f.Dataset = ds
	f.Scaling = Scaling{XMean: ds.XMean, XStd: ds.XStd, YMean: ds.YMean, YStd: ds.YStd}
	if err := f.Scaling.Check(ds.D); err != nil {
		return nil, fmt.Errorf("%s: %w (the training rows' values are too large for float64 arithmetic)", r.Source, err)
	}
	return f, nil
}
