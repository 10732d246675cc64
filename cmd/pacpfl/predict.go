package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/modelfile"
)

func init() {
	register(&command{
		name:    "predict",
		summary: "predict with a saved model (train --data FILE.csv --save) for the rows of a CSV file",
		run:     runPredict,
	})
}

// userPrediction is the prediction of every row of a file that is not a
// context row.
type userPrediction struct {
	rec  *data.Records
	rows []int // the predicted rows, in file order
	// Per predicted row: regression mean, std and the 2.5 % and 97.5 %
	// quantiles (data units); classification the class probabilities
	// (len(rows) × classes).
	reg   []regressionRow
	probs []float64
	// context[c] is the number of rows client c was conditioned on (its
	// stored data and those of its context rows that are not among them);
	// known[c] whether the model knew the client.
	context []int
	known   []bool
	// The per-client results, for plots: the client's job and its output.
	jobs   []predictJob
	outs   []predictOut
	rowsOf [][]int // per client, its predicted rows
}

// readForModel reads a CSV file for model u: its features, client and
// target columns, and the context column if given; a feature the file
// lacks is named with the model's list.
func (u *userModel) readForModel(path, contextCol string) (*data.Records, error) {
	mf := u.file
	spec := data.CSVSpec{ClientColumn: mf.ClientColumn, TargetColumn: mf.Target, Features: mf.Features,
		ContextColumn: contextCol, Task: data.Task(mf.Task), TargetOptional: true}
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

// predictRecords personalises the model on every client of rec (a client
// the model knows: its stored rows and its context rows; another client:
// its context rows) and predicts the other rows.
func (u *userModel) predictRecords(rec *data.Records) (*userPrediction, error) {
	nc := len(rec.Clients)
	p := &userPrediction{rec: rec, context: make([]int, nc), known: make([]bool, nc), rowsOf: make([][]int, nc)}
	jobs := make([]predictJob, nc)
	first := make([]int, nc)
	for i := range first {
		first[i] = -1
	}
	// stored[c]: the rows the model holds for client c; a context row
	// identical to one of them is not conditioned on twice.
	stored := make([]map[string]bool, nc)
	for c, id := range rec.Clients {
		jobs[c].id = id
		k := u.client(id)
		stored[c] = u.storedKeys(k)
		if k >= 0 {
			p.known[c] = true
			jobs[c].cx = append(jobs[c].cx, u.file.Clients[k].X...)
			jobs[c].cy = append(jobs[c].cy, u.file.Clients[k].Y...)
		}
	}
	for r := range rec.Rows() {
		c := rec.Client[r]
		if first[c] < 0 {
			first[c] = r
		}
		if rec.Context[r] {
			sx, sy := u.scaleX(rec.Row(r)), u.scaleY(rec.Y[r:r+1])
			if !stored[c][rowKey(sx, sy[0])] {
				jobs[c].cx = append(jobs[c].cx, sx...)
				jobs[c].cy = append(jobs[c].cy, sy...)
			}
			continue
		}
		p.rows = append(p.rows, r)
		p.rowsOf[c] = append(p.rowsOf[c], r)
		jobs[c].xt = append(jobs[c].xt, u.scaleX(rec.Row(r))...)
	}
	for c := range jobs {
		p.context[c] = len(jobs[c].cy)
		if p.context[c] == 0 {
			return nil, fmt.Errorf("%s:%d: client %q is not one the model was trained on (or its rows were not saved), and no row of it is marked as its own training data: give a --context-column marking some of its labelled rows",
				rec.Source, rec.Line[first[c]], rec.Clients[c])
		}
		if len(jobs[c].xt) == 0 {
			jobs[c].xt = nil
		}
	}
	outs, err := u.predict(jobs)
	if err != nil {
		return nil, err
	}
	p.jobs, p.outs = jobs, outs
	// The rows back in file order.
	pos := make([]int, nc) // next predicted row of each client
	classes := len(u.file.Classes)
	for _, r := range p.rows {
		c := rec.Client[r]
		j := pos[c]
		pos[c]++
		if u.regression() {
			p.reg = append(p.reg, u.regressionRow(outs[c].mix, j))
		} else {
			p.probs = append(p.probs, outs[c].probs[j*classes:(j+1)*classes]...)
		}
	}
	return p, nil
}

// csvBytes writes the predictions as CSV: the input line, the client, the
// observed target where the file has one, then the predictive.
func (p *userPrediction) csvBytes(u *userModel) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	mf := u.file
	hasTarget := p.rec.Target != ""
	header := []string{"line", mf.ClientColumn}
	if hasTarget {
		header = append(header, "observed")
	}
	if u.regression() {
		header = append(header, "mean", "std", "q2.5", "q97.5")
	} else {
		for _, c := range mf.Classes {
			header = append(header, "p_"+c)
		}
		header = append(header, "predicted")
	}
	w.Write(header)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	classes := len(mf.Classes)
	for i, r := range p.rows {
		row := []string{strconv.Itoa(p.rec.Line[r]), p.rec.Clients[p.rec.Client[r]]}
		if hasTarget {
			y := p.rec.Y[r]
			switch {
			case math.IsNaN(y):
				row = append(row, "")
			case u.regression():
				row = append(row, num(y))
			default:
				row = append(row, mf.Classes[int(y)])
			}
		}
		if u.regression() {
			g := p.reg[i]
			row = append(row, num(g.mean), num(g.std), num(g.q025), num(g.q975))
		} else {
			pr := p.probs[i*classes : (i+1)*classes]
			best := 0
			for c, v := range pr {
				row = append(row, num(v))
				if v > pr[best] {
					best = c
				}
			}
			row = append(row, mf.Classes[best])
		}
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func runPredict(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("predict", stderr)
	model := fs.String("model", "", "the model `FILE` (pacpfl train --data FILE.csv --save FILE)")
	dataPath := fs.String("data", "", "the CSV `FILE` of rows to predict: the model's client, feature and (for context rows) target columns")
	out := fs.String("out", "-", "write the predictions as CSV to `FILE` (-: standard output)")
	contextCol := fs.String("context-column", "", "a column marking the rows that are a client's own labelled data (1, true, yes, train or context): the model personalises on them and predicts the others; needed for clients the model never saw")
	inf := addInferenceOverride(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	switch {
	case *model == "":
		return fail(stderr, "predict", usagef("--model FILE is required"))
	case *dataPath == "":
		return fail(stderr, "predict", usagef("--data FILE.csv is required"))
	}
	if err := inf.check(); err != nil {
		return fail(stderr, "predict", err)
	}
	if err := checkOutput("--out", *out); err != nil {
		return fail(stderr, "predict", err)
	}
	u, err := loadUserModel(*model)
	if err == nil {
		err = inf.apply(u)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	rec, err := u.readForModel(*dataPath, *contextCol)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	p, err := u.predictRecords(rec)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	b, err := p.csvBytes(u)
	if err == nil {
		err = writeOutput(stdout, "--out", *out, b)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	if *out != "-" {
		known := 0
		for _, k := range p.known {
			if k {
				known++
			}
		}
		fmt.Fprintf(stdout, "%d rows of %d clients (%d known to the model, %d new) predicted into %s\n", len(p.rows), len(rec.Clients), known, len(rec.Clients)-known, *out)
	}
	return exitOK
}
