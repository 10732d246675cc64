package data

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Federated data sets from a user's CSV file: one row per sample, a column
// naming the client the sample belongs to, a target column and feature
// columns. ReadCSV parses the file into Records (a pass over the rows that
// keeps only the columns asked for, as float64); Records.Federate makes a
// Dataset of it (held-out new clients, a per-client train/test split,
// standardisation).
//
// The format is CSV as encoding/csv reads it (RFC 4180): the first record is
// a header naming the columns; fields may be quoted; a UTF-8 byte-order
// mark is skipped; lines starting with # are comments; blank lines are
// skipped. Numbers are plain decimals (12, -0.5, 1e-3; not 0x10, 1_000, Inf).
// An empty field, NA, N/A, NaN, null or ? is a missing value.

// Task is what a data set's target is.
type Task string

const (
	Regression     Task = "regression"     // a real-valued target
	Classification Task = "classification" // a class label (any string)
)

// CSVSpec says which columns of a CSV file to read and how.
type CSVSpec struct {
	ClientColumn string // required: the client each row belongs to
	// TargetColumn is the target; it may be absent from the file when
	// TargetOptional is set (prediction).
	TargetColumn string
	// Features are the input columns, in this order. Empty: every column
	// that is not the client, target, split or context column, in file
	// order.
	Features []string
	// SplitColumn, optional, marks each row train or test.
	SplitColumn string
	// ContextColumn, optional, marks the rows that are a client's own
	// training data in prediction (1, true, yes, train or context; 0,
	// false, no, test, predict or empty for the rows to predict).
	ContextColumn string
	Task          Task // Regression (the default) or Classification
	// Classes, for classification, are the class labels in class-index
	// order. Nil: the labels found in the file, sorted (numerically when
	// they all are numbers). Given: a label outside them is an error.
	Classes []string
	// TargetOptional lets the target column be missing from the file and
	// a target be missing on rows that are not context rows (prediction).
	TargetOptional bool
	// DropMissing drops the rows with a missing feature or target instead
	// of refusing the file; Records.Dropped counts them.
	DropMissing bool
	// MaxLine bounds the length of one line in bytes (0: 64 MiB), so that
	// a file without line breaks is refused instead of read whole.
	MaxLine int
}

// Records are the rows of a CSV file that ReadCSV kept: the columns asked
// for, parsed.
type Records struct {
	Source   string   // the file, for messages
	Features []string // feature column names, in the order of X's columns
	Target   string   // target column ("" when the file has none)
	Task     Task
	Classes  []string // class labels (classification)
	// Clients are the distinct client IDs in order of first appearance;
	// Client[r] indexes it for row r.
	Clients []string
	Client  []int
	X       []float64 // rows × len(Features), row-major
	// Y holds the target: the value for regression, the class index for
	// classification; NaN where it is missing (only with TargetOptional).
	Y []float64
	// Test[r] is true for a row the split column marks test (all false
	// without one); Context[r] is true for a row the context column marks
	// as the client's own data (all false without one).
	Test, Context []bool
	Line          []int // the line of each row in the file (1-based)
	Dropped       int   // rows dropped for missing values (DropMissing)
	HasSplit      bool  // the file has the split column
}

// Rows is the number of rows kept.
func (r *Records) Rows() int { return len(r.Line) }

// D is the number of features.
func (r *Records) D() int { return len(r.Features) }

// Row returns row i's features.
func (r *Records) Row(i int) []float64 { d := r.D(); return r.X[i*d : (i+1)*d] }

// DefaultMaxCSVLine is the default limit of one CSV line.
const DefaultMaxCSVLine = 64 << 20

// ReadCSVFile opens path and reads it with ReadCSV.
func ReadCSVFile(path string, spec CSVSpec) (*Records, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCSV(f, path, spec)
}

// NewCSVReader returns an encoding/csv reader over r configured as every
// CSV reader of pacpfl is: RFC 4180 fields, a leading byte-order mark
// skipped, '#' comment lines, leading spaces trimmed, the number of fields
// left to the caller (who names the offending line), records reused, and
// no line longer than maxLine bytes (≤ 0: DefaultMaxCSVLine), so that a
// file without newlines fails with a message naming the line instead of
// filling memory.
func NewCSVReader(r io.Reader, maxLine int) *csv.Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxCSVLine
	}
	br := bufio.NewReader(&lineLimiter{r: r, limit: maxLine})
	if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return cr
}

// lineLimiter fails a read once a line exceeds limit bytes, naming the
// line.
type lineLimiter struct {
	r          io.Reader
	line, run  int
	limit      int
	overflowed error
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.overflowed != nil {
		return 0, l.overflowed
	}
	n, err := l.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.run += len(rest)
			break
		}
		l.run += i
		if l.run > l.limit {
			break
		}
		l.line++
		l.run = 0
		rest = rest[i+1:]
	}
	if l.run > l.limit {
		l.overflowed = fmt.Errorf("line %d is longer than %s, the limit of a CSV line", l.line+1, byteSize(l.limit))
		return 0, l.overflowed
	}
	return n, err
}

// byteSize is n in MiB or KiB when it is a whole number of them, else in
// bytes.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// missingValue reports whether a field (trimmed) is a missing value.
func missingValue(s string) bool {
	switch strings.ToLower(s) {
	case "", "na", "n/a", "nan", "null", "?":
		return true
	}
	return false
}

// ParseNumber parses a plain decimal number (12, -0.5, 1e-3, .5, 5.); its
// error says what is wrong with s: not finite (NaN, Inf), not a number, or
// out of float64's range. Go literals such as 0x10 or 1_000 are not numbers
// here. Every reader of numbers in pacpfl's files uses it (a field that may
// be missing is checked for that first).
func ParseNumber(s string) (float64, error) {
	if !plainDecimal(s) {
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case "nan", "inf", "infinity":
			return 0, fmt.Errorf("%q is not finite", s)
		}
		return 0, fmt.Errorf("%q is not a number (plain decimals such as 12, -0.5 or 1e-3)", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is out of range: beyond ±%.4g, the largest float64", s, math.MaxFloat64)
	}
	return v, nil
}

// plainDecimal reports whether s is [+-] digits [. digits] [e [+-] digits]
// with at least one digit in the mantissa.
func plainDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// truthy parses a split or context marker.
func marker(s string, yes, no []string) (bool, bool) {
	l := strings.ToLower(s)
	if slices.Contains(yes, l) {
		return true, true
	}
	if slices.Contains(no, l) {
		return false, true
	}
	return false, false
}

var (
	contextYes = []string{"1", "true", "yes", "train", "context"}
	contextNo  = []string{"0", "false", "no", "test", "predict", ""}
	splitTest  = []string{"test"}
	splitTrain = []string{"train"}
)

// ordinal is 1st, 2nd, 3rd, 4th, …
func ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return strconv.Itoa(n) + suf
}

// ReadCSV reads a CSV file (the format above) from r; source names it in
// errors. Every error names the file, the line and, for a bad field, the
// column by name and position.
func ReadCSV(r io.Reader, source string, spec CSVSpec) (*Records, error) {
	if spec.Task == "" {
		spec.Task = Regression
	}
	if spec.Task != Regression && spec.Task != Classification {
		return nil, fmt.Errorf("unknown task %q (want %s or %s)", spec.Task, Regression, Classification)
	}
	if spec.ClientColumn == "" {
		return nil, errors.New("no client column given")
	}
	if spec.TargetColumn == "" && !spec.TargetOptional {
		return nil, errors.New("no target column given")
	}
	cr := NewCSVReader(r, spec.MaxLine)
	errAt := func(line int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", source, line, fmt.Sprintf(format, a...))
	}
	var header []string
	for header == nil {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil,
				fmt.Errorf("%s: empty file: want a header line naming the columns, then one row per sample", source)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		header = make([]string, len(rec))
		line, _ := cr.FieldPos(0)
		for i, h := range rec {
			h = strings.TrimSpace(h)
			if h == "" {
				return nil, errAt(line, "header: the %s column has no name", ordinal(i+1))
			}
			if j := slices.Index(header[:i], h); j >= 0 {
				return nil, errAt(line, "header: column name %q appears twice (the %s and %s columns)", h, ordinal(j+1),
					ordinal(i+1))
			}
			header[i] = h
		}
	}
	col := func(name string) int { return slices.Index(header, name) }
	need := func(what, name string) (int, error) {
		if name == "" {
			return -1, nil
		}
		c := col(name)
		if c < 0 {
			return -1, &MissingColumnError{Source: source, Role: what, Name: name, Columns: header}
		}
		return c, nil
	}
	cc, err := need("client", spec.ClientColumn)
	if err != nil {
		return nil, err
	}
	tc := -1
	if spec.TargetColumn != "" {
		if tc = col(spec.TargetColumn); tc < 0 && !spec.TargetOptional {
			_, err := need("target", spec.TargetColumn)
			return nil, err
		}
	}
	sc, err := need("split", spec.SplitColumn)
	if err != nil {
		return nil, err
	}
	xc, err := need("context", spec.ContextColumn)
	if err != nil {
		return nil, err
	}
	roles := map[int]string{cc: "client"}
	for _, c := range []struct {
		idx  int
		role string
	}{{tc, "target"}, {sc, "split"}, {xc, "context"}} {
		if c.idx < 0 {
			continue
		}
		if other, dup := roles[c.idx]; dup {
			return nil,
				fmt.Errorf("%s: column %q is both the %s and the %s column", source, header[c.idx], other, c.role)
		}
		roles[c.idx] = c.role
	}
	var fcols []int
	if len(spec.Features) == 0 {
		for i := range header {
			if _, taken := roles[i]; !taken {
				fcols = append(fcols, i)
			}
		}
		if len(fcols) == 0 {
			return nil, fmt.Errorf("%s: no feature columns: the columns %s are the client, target, split and context "+
				"columns", source, quoteList(header))
		}
	} else {
		for i, name := range spec.Features {
			c, err := need("feature", name)
			if err != nil {
				return nil, err
			}
			if role, taken := roles[c]; taken {
				return nil, fmt.Errorf("%s: feature %q is also the %s column", source, name, role)
			}
			if slices.Contains(spec.Features[:i], name) {
				return nil, fmt.Errorf("feature %q is listed twice", name)
			}
			fcols = append(fcols, c)
		}
	}
	rec := &Records{Source: source, Task: spec.Task, HasSplit: sc >= 0}
	for _, c := range fcols {
		rec.Features = append(rec.Features, header[c])
	}
	if tc >= 0 {
		rec.Target = header[tc]
	}
	clientIndex := map[string]int{}
	var labels []string // classification: the raw label of each row
	labelIndex := map[string]int{}
	for i, c := range spec.Classes {
		labelIndex[c] = i
	}
	colName := func(c int) string { return fmt.Sprintf("column %q (%s)", header[c], ordinal(c+1)) }
	for {
		fields, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, errAt(pe.Line, "byte %d: %v", pe.Column, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
			continue // a line of blanks
		}
		line, _ := cr.FieldPos(0)
		if len(fields) != len(header) {
			return nil, errAt(line, "%d fields, the header has %d columns", len(fields), len(header))
		}
		field := func(c int) string { return strings.TrimSpace(fields[c]) }
		id := field(cc)
		if id == "" {
			return nil, errAt(line, "%s: no client ID", colName(cc))
		}
		drop := false
		start := len(rec.X)
		for _, c := range fcols {
			s := field(c)
			if missingValue(s) {
				if spec.DropMissing {
					drop = true
					break
				}
				return nil, errAt(line, "%s: missing value %q (fill it in, leave the column out with --features, or "+
					"drop such rows with --drop-missing)", colName(c), s)
			}
			v, err := ParseNumber(s)
			if err != nil {
				return nil, errAt(line, "%s: %v (a feature must be a number; leave the column out with --features)",
					colName(c), err)
			}
			rec.X = append(rec.X, v)
		}
		isContext := false
		if xc >= 0 {
			v, ok := marker(field(xc), contextYes, contextNo)
			if !ok {
				return nil, errAt(line, "%s: %q is not a context marker (1, true, yes, train or context for a "+
					"client's own data; 0, false, no, test, predict or empty for rows to predict)", colName(xc),
					field(xc))
			}
			isContext = v
		}
		isTest := false
		if sc >= 0 {
			v, ok := marker(field(sc), splitTest, splitTrain)
			if !ok {
				return nil, errAt(line, "%s: %q is neither train nor test", colName(sc), field(sc))
			}
			isTest = v
		}
		y, label := math.NaN(), ""
		targetNeeded := !spec.TargetOptional || isContext
		if tc < 0 && targetNeeded {
			return nil, errAt(line, "a context row needs the target column %q, which the file lacks", spec.TargetColumn)
		}
		if !drop && tc >= 0 {
			s := field(tc)
			switch {
			case missingValue(s) && !targetNeeded:
			case missingValue(s) && spec.DropMissing:
				drop = true
			case missingValue(s):
				return nil, errAt(line, "%s: missing target %q (fill it in or drop such rows with --drop-missing)",
					colName(tc), s)
			case spec.Task == Regression:
				v, err := ParseNumber(s)
				if err != nil {
					return nil, errAt(line, "%s: %v (a regression target must be a number; for class labels use "+
						"--task classification)", colName(tc), err)
				}
				y = v
			default:
				if spec.Classes != nil {
					k, ok := labelIndex[s]
					if !ok {
						return nil, errAt(line, "%s: class %q is not one of the model's classes %s", colName(tc), s,
							quoteList(spec.Classes))
					}
					y = float64(k)
				}
				label = s
			}
		}
		if drop {
			rec.X = rec.X[:start]
			rec.Dropped++
			continue
		}
		ci, ok := clientIndex[id]
		if !ok {
			ci = len(rec.Clients)
			clientIndex[id] = ci
			rec.Clients = append(rec.Clients, id)
		}
		rec.Client = append(rec.Client, ci)
		rec.Y = append(rec.Y, y)
		rec.Test = append(rec.Test, isTest)
		rec.Context = append(rec.Context, isContext)
		rec.Line = append(rec.Line, line)
		if spec.Task == Classification && spec.Classes == nil {
			labels = append(labels, label)
		}
	}
	if rec.Rows() == 0 {
		if rec.Dropped > 0 {
			return nil, fmt.Errorf("%s: every one of the %d data rows has a missing value", source, rec.Dropped)
		}
		return nil, fmt.Errorf("%s: no data rows after the header", source)
	}
	if spec.Task == Classification {
		rec.Classes = spec.Classes
		if rec.Classes == nil {
			rec.Classes = classLabels(labels)
			for i, c := range rec.Classes {
				labelIndex[c] = i
			}
			for r, l := range labels {
				if l != "" {
					rec.Y[r] = float64(labelIndex[l])
				}
			}
		}
	}
	return rec, nil
}

// classLabels returns the distinct non-empty labels, sorted numerically when
// all are numbers, else as strings.
func classLabels(labels []string) []string {
	seen := map[string]bool{}
	var out []string
	numeric := true
	for _, l := range labels {
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
		if _, err := ParseNumber(l); err != nil {
			numeric = false
		}
	}
	if numeric {
		slices.SortFunc(out, func(a, b string) int {
			x, _ := ParseNumber(a)
			y, _ := ParseNumber(b)
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
	} else {
		slices.Sort(out)
	}
	return out
}

// MissingColumnError is a column the spec names that the file lacks.
type MissingColumnError struct {
	Source  string
	Role    string // client, target, feature, split or context
	Name    string
	Columns []string // the file's columns
}

func (e *MissingColumnError) Error() string {
	return fmt.Sprintf("%s: no %s column %q (the columns are %s)", e.Source, e.Role, e.Name, quoteList(e.Columns))
}

// quoteList is names quoted and comma-separated, shortened beyond 12.
func quoteList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == 12 {
			fmt.Fprintf(&b, ", … (%d more)", len(names)-12)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}
