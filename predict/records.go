package predict

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/modelfile"
)

// ReadCSV reads a CSV file for the model: its client, feature and target
// columns (the target may be missing or empty on the rows to predict), and
// the context column if contextColumn is not empty. A missing feature or
// client column is reported with the model's names for them.
func (p *Predictor) ReadCSV(path, contextColumn string) (*data.Records, error) {
	mf := p.file
	spec := data.CSVSpec{ClientColumn: mf.ClientColumn, TargetColumn: mf.Target, Features: mf.Features,
		ContextColumn: contextColumn, Task: data.Task(mf.Task), TargetOptional: true}
	if mf.Task == modelfile.TaskClassification {
		spec.Classes = mf.Classes
	}
	rec, err := data.ReadCSVFile(path, spec)
	var mc *data.MissingColumnError
	if errors.As(err, &mc) && mc.Role == "feature" {
		return nil, fmt.Errorf("%w; the model was trained on the features %s", err, quoteNames(mf.Features))
	}
	if errors.As(err, &mc) && mc.Role == "client" {
		return nil, fmt.Errorf("%w; the model's clients are named in column %q", err, mf.ClientColumn)
	}
	return rec, err
}

// quoteNames is names quoted and comma-separated.
func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// NoContextError is a client with nothing to be personalised on: the model
// has no rows of it (a new client, or a model saved without its clients'
// rows) and none of its rows is a context row.
type NoContextError struct {
	Client string
	// Source and Line locate the client's first row when the error comes
	// from Predict (Source empty otherwise).
	Source string
	Line   int
}

func (e *NoContextError) Error() string {
	s := fmt.Sprintf("client %q is not one the model was trained on (or its rows were not saved), and no row of it "+
		"is a context row to personalise on", e.Client)
	if e.Source != "" {
		s = fmt.Sprintf("%s:%d: %s", e.Source, e.Line, s)
	}
	return s
}

// Result is the prediction of every row of a file that is not a context
// row.
type Result struct {
	Records *data.Records
	Rows    []int // the predicted rows of Records, in file order
	// Regression holds the predictive of each predicted row (in the order
	// of Rows) for a regression model, Probs the class probabilities for a
	// classification model (len(Rows) × classes, the model's Classes).
	Regression []Summary
	Probs      []float64
	// Clients are the clients of Records, in its order, with what they
	// were conditioned on and their predictions.
	Clients []ClientResult
	model   *modelfile.Model
}

// ClientResult is one client's part of a Result.
type ClientResult struct {
	ID string
	// Known: the model holds rows of the client, which it was conditioned
	// on with its context rows.
	Known bool
	// Conditioned is the number of rows the client was conditioned on:
	// its stored rows and those of its context rows that are not among
	// them.
	Conditioned int
	Rows        []int // its predicted rows, in file order
	// Output is the prediction of Rows, in their order.
	Output
}

// rowKey identifies a standardised row and target bit for bit.
func rowKey(x []float64, y float64) string {
	b := make([]byte, 0, 8*(len(x)+1))
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(binary.LittleEndian.AppendUint64(b, math.Float64bits(y)))
}

// storedKeys is the set of the rows the model stored for client k (−1:
// none).
func (p *Predictor) storedKeys(k int) map[string]bool {
	set := map[string]bool{}
	if k < 0 {
		return set
	}
	c := p.file.Clients[k]
	d := len(p.file.Features)
	for i := range c.Y {
		set[rowKey(c.X[i*d:(i+1)*d], c.Y[i])] = true
	}
	return set
}

// checkRecords refuses records whose features are not the model's: their
// rows would be standardised and fed to the networks column for column.
func (p *Predictor) checkRecords(rec *data.Records) error {
	if !slices.Equal(rec.Features, p.file.Features) {
		return fmt.Errorf("%s: the features %s are not the model's %s", rec.Source, quoteNames(rec.Features),
			quoteNames(p.file.Features))
	}
	return nil
}

// Predict personalises the model on every client of rec and predicts its
// rows that are not context rows. A client the model knows is conditioned
// on its stored rows and its context rows (a context row identical to a
// stored one counts once), any other client on its context rows; a client
// with neither is a NoContextError. rec is read with ReadCSV (or has the
// model's features in its order).
func (p *Predictor) Predict(rec *data.Records) (*Result, error) {
	if err := p.checkRecords(rec); err != nil {
		return nil, err
	}
	nc := len(rec.Clients)
	res := &Result{Records: rec, Clients: make([]ClientResult, nc), model: p.file}
	jobs := make([]Client, nc)
	first := make([]int, nc)
	for i := range first {
		first[i] = -1
	}
	// stored[c]: the rows the model holds for client c; a context row
	// identical to one of them is not conditioned on twice.
	stored := make([]map[string]bool, nc)
	for c, id := range rec.Clients {
		jobs[c].ID, res.Clients[c].ID = id, id
		k := p.client(id)
		stored[c] = p.storedKeys(k)
		if k >= 0 {
			res.Clients[c].Known = true
			jobs[c].X = append(jobs[c].X, p.file.Clients[k].X...)
			jobs[c].Y = append(jobs[c].Y, p.file.Clients[k].Y...)
		}
	}
	for r := range rec.Rows() {
		c := rec.Client[r]
		if first[c] < 0 {
			first[c] = r
		}
		if rec.Context[r] {
			sx, sy := p.ScaleX(rec.Row(r)), p.ScaleY(rec.Y[r:r+1])
			if !stored[c][rowKey(sx, sy[0])] {
				jobs[c].X = append(jobs[c].X, sx...)
				jobs[c].Y = append(jobs[c].Y, sy...)
			}
			continue
		}
		res.Rows = append(res.Rows, r)
		res.Clients[c].Rows = append(res.Clients[c].Rows, r)
		jobs[c].XTest = append(jobs[c].XTest, p.ScaleX(rec.Row(r))...)
	}
	for c := range jobs {
		res.Clients[c].Conditioned = len(jobs[c].Y)
		if len(jobs[c].Y) == 0 {
			return nil, &NoContextError{Client: rec.Clients[c], Source: rec.Source, Line: rec.Line[first[c]]}
		}
		if len(jobs[c].XTest) == 0 {
			jobs[c].XTest = nil
		}
	}
	outs, err := p.PredictClients(jobs)
	if err != nil {
		return nil, err
	}
	for c := range outs {
		res.Clients[c].Output = outs[c]
	}
	// The rows back in file order.
	pos := make([]int, nc) // next predicted row of each client
	classes := len(p.file.Classes)
	for _, r := range res.Rows {
		c := rec.Client[r]
		j := pos[c]
		pos[c]++
		if p.Regression() {
			res.Regression = append(res.Regression, p.Summary(outs[c].Mixture, j))
		} else {
			res.Probs = append(res.Probs, outs[c].Probs[j*classes:(j+1)*classes]...)
		}
	}
	return res, nil
}

// WriteCSV writes the predictions as CSV, a row per predicted row: its
// line in the input file, its client, the observed target where the file
// has a target column (empty where the row has none), then for regression
// the mean, std, q2.5 and q97.5 of the predictive, for classification the
// probability of each class (p_LABEL) and the most probable class.
func (r *Result) WriteCSV(out io.Writer) error {
	w := csv.NewWriter(out)
	mf := r.model
	regression := mf.Task == modelfile.TaskRegression
	hasTarget := r.Records.Target != ""
	header := []string{"line", mf.ClientColumn}
	if hasTarget {
		header = append(header, "observed")
	}
	if regression {
		header = append(header, "mean", "std", "q2.5", "q97.5")
	} else {
		for _, c := range mf.Classes {
			header = append(header, "p_"+c)
		}
		header = append(header, "predicted")
	}
	w.Write(header)
	// The shortest decimal that reads back to the same float64.
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	classes := len(mf.Classes)
	for i, row := range r.Rows {
		rec := []string{strconv.Itoa(r.Records.Line[row]), r.Records.Clients[r.Records.Client[row]]}
		if hasTarget {
			y := r.Records.Y[row]
			switch {
			case math.IsNaN(y):
				rec = append(rec, "")
			case regression:
				rec = append(rec, num(y))
			default:
				rec = append(rec, mf.Classes[int(y)])
			}
		}
		if regression {
			g := r.Regression[i]
			rec = append(rec, num(g.Mean), num(g.Std), num(g.Q025), num(g.Q975))
		} else {
			pr := r.Probs[i*classes : (i+1)*classes]
			best := 0
			for c, v := range pr {
				rec = append(rec, num(v))
				if v > pr[best] {
					best = c
				}
			}
			rec = append(rec, mf.Classes[best])
		}
		w.Write(rec)
	}
	w.Flush()
	return w.Error()
}

// Points is one client's labelled rows of a file, with the rows the model
// stored for it, split into what the model conditions the client on and
// the rest: for figures and for checking the personalised predictive on
// rows it has not seen.
type Points struct {
	ID    string
	Known bool // the model holds rows of the client
	// TrainX (rows × D) and TrainY are the conditioning rows in the data's
	// units: the stored rows, then the context rows not among them.
	TrainX, TrainY []float64
	// TestX and TestY are the client's other rows with a target: neither
	// context rows nor identical to a stored row.
	TestX, TestY []float64
	// Client is the conditioning set, standardised, for PredictClients
	// once its XTest is set.
	Client Client
}

// ClientPoints gathers client id's rows from the model and from rec (rows
// without a target are left out). A client with no rows to condition on
// is a NoContextError.
func (p *Predictor) ClientPoints(rec *data.Records, id string) (*Points, error) {
	if err := p.checkRecords(rec); err != nil {
		return nil, err
	}
	d := len(p.file.Features)
	f := p.file
	unX := func(x []float64) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = f.XMean[i%d] + f.XStd[i%d]*v
		}
		return out
	}
	unY := func(y float64) float64 {
		if !p.Regression() {
			return y // a class index
		}
		return f.YMean + f.YStd*y
	}
	pts := &Points{ID: id, Client: Client{ID: id}}
	k := p.client(id)
	stored := p.storedKeys(k)
	if k >= 0 {
		pts.Known = true
		c := f.Clients[k]
		pts.Client.X = append(pts.Client.X, c.X...)
		pts.Client.Y = append(pts.Client.Y, c.Y...)
		pts.TrainX = unX(c.X)
		for _, y := range c.Y {
			pts.TrainY = append(pts.TrainY, unY(y))
		}
	}
	for r := range rec.Rows() {
		if rec.Clients[rec.Client[r]] != id || math.IsNaN(rec.Y[r]) {
			continue
		}
		x, y := rec.Row(r), rec.Y[r]
		sx, sy := p.ScaleX(x), p.ScaleY([]float64{y})[0]
		switch {
		case stored[rowKey(sx, sy)]:
			// Already among the training points.
		case rec.Context[r]:
			pts.Client.X = append(pts.Client.X, sx...)
			pts.Client.Y = append(pts.Client.Y, sy)
			pts.TrainX = append(pts.TrainX, x...)
			pts.TrainY = append(pts.TrainY, y)
		default:
			pts.TestX = append(pts.TestX, x...)
			pts.TestY = append(pts.TestY, y)
		}
	}
	if len(pts.Client.Y) == 0 {
		return nil, &NoContextError{Client: id}
	}
	return pts, nil
}

// KnownClients is the number of clients the model holds rows of.
func (r *Result) KnownClients() int {
	known := 0
	for _, c := range r.Clients {
		if c.Known {
			known++
		}
	}
	return known
}

// WriteSummary prints one line saying how many rows of how many clients,
// known to the model and new, were predicted into out.
func (r *Result) WriteSummary(w io.Writer, out string) error {
	known := r.KnownClients()
	_, err := fmt.Fprintf(w, "%d rows of %d clients (%d known to the model, %d new) predicted into %s\n",
		len(r.Rows), len(r.Clients), known, len(r.Clients)-known, out)
	return err
}
