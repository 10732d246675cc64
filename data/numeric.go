package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadNumericCSV reads a numeric CSV (pacpfl gp eval's
// and bnn eval's data files): every row has the same number (≥ 2) of plain
// decimal fields (ParseNumber), the last being y, read by NewCSVReader with
// lines of at most maxLine bytes. The first row may be a header: it is one
// if none of its fields is a number, so that a first data row with one
// malformed field is an error, not a header silently dropped. Errors name
// the file and line. X holds the rows' other d fields, row-major.
func ReadNumericCSV(path string, maxLine int) (X, y []float64, d int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	r := NewCSVReader(f, maxLine)
	cols, first := 0, true
	var row []float64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a line of blanks
		}
		line, _ := r.FieldPos(0)
		wasFirst := first
		first = false
		var bad error
		numbers := 0
		if row, numbers, bad = parseNumericRow(row[:0], rec, path, line); bad != nil {
			if wasFirst && numbers == 0 && !strings.Contains(bad.Error(), "finite") {
				cols = len(rec) // a header: it fixes the column count
				continue
			}
			return nil, nil, 0, bad
		}
		if cols == 0 {
			cols = len(row)
		}
		if len(row) != cols {
			return nil, nil, 0, fmt.Errorf("%s:%d: %d fields, want %d like the first row", path, line, len(row), cols)
		}
		if cols < 2 {
			return nil, nil, 0, fmt.Errorf("%s:%d: need at least one feature column and the y column", path, line)
		}
		X = append(X, row[:cols-1]...)
		y = append(y, row[cols-1])
	}
	if len(y) == 0 {
		return nil, nil, 0, fmt.Errorf("%s: no data rows", path)
	}
	return X, y, cols - 1, nil
}

// parseNumericRow appends rec's numbers to row; bad is the first field
// that is not one, numbers how many are.
func parseNumericRow(row []float64, rec []string, path string, line int) (_ []float64, numbers int, bad error) {
	for i, fld := range rec {
		v, perr := ParseNumber(strings.TrimSpace(fld))
		if perr != nil {
			if bad == nil {
				bad = fmt.Errorf("%s:%d: field %d: %w", path, line, i+1, perr)
			}
			continue
		}
		numbers++
		row = append(row, v)
	}
	return row, numbers, bad
}

// ReadLabelledCSV reads a classification CSV as ReadNumericCSV does, but
// with the class label in the first column, then the d features.
func ReadLabelledCSV(path string, maxLine int) (X, y []float64, d int, err error) {
	Xr, last, d, err := ReadNumericCSV(path, maxLine)
	if err != nil {
		return nil, nil, 0, err
	}
	// Rotate every row back so that the first column is the label.
	m := len(last)
	X = make([]float64, 0, m*d)
	y = make([]float64, m)
	row := make([]float64, d+1)
	for r := range m {
		copy(row, Xr[r*d:(r+1)*d])
		row[d] = last[r]
		y[r] = row[0]
		X = append(X, row[1:]...)
	}
	return X, y, d, nil
}

// ReadNumbers reads a file of plain decimal numbers, one per line (blank
// lines and # comments skipped, a leading byte-order mark ignored): a
// parameter vector φ. Errors name the file and line.
func ReadNumbers(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	const maxLine = 1 << 20
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var phi []float64
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\uFEFF"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		v, err := ParseNumber(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		phi = append(phi, v)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: line longer than %d MiB (one number per line)", path, line+1, maxLine>>20)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return phi, nil
}
