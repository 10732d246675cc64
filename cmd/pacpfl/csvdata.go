package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pacpfl/pacpfl/data"
)

// The data files of gp eval and bnn eval are CSV as encoding/csv reads it
// (RFC 4180): fields may be quoted ("1.5" is 1.5), a UTF-8 byte-order mark
// at the start of the file is skipped, a line starting with # is a comment,
// blank lines are skipped. The numbers are plain decimals — 12, -0.5, 1e-3 —
// not Go literals (1_000, 0x10) and not Inf or NaN.

// csvFormatHelp is what -h says about the format.
const csvFormatHelp = "CSV (RFC 4180: quoted fields allowed, a UTF-8 BOM skipped, # comment lines) of plain decimal numbers"

// maxCSVLine bounds a line (a row of 784 pixels is a few KiB), so that a file
// without line breaks is refused instead of read whole into memory; a
// variable for the tests.
var maxCSVLine = 64 << 20

// openCSV opens path for encoding/csv, the byte-order mark skipped and the
// lines limited.
func openCSV(path string) (*csv.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r := data.NewCSVReader(f, maxCSVLine)
	return r, f, nil
}

// readCSVData reads a numeric CSV: every row has the same number (≥ 2) of
// fields, the last being y. The first row may be a header (it is one if none
// of its fields is a number: a first data row with one malformed field is an
// error, not a header silently dropped). Errors name the file and line.
func readCSVData(path string) (X, y []float64, d int, err error) {
	r, f, err := openCSV(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
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
		row = row[:0]
		var bad error
		numbers := 0
		for i, fld := range rec {
			v, perr := data.ParseNumber(strings.TrimSpace(fld))
			if perr != nil {
				if bad == nil {
					bad = fmt.Errorf("%s:%d: field %d: %w", path, line, i+1, perr)
				}
				continue
			}
			numbers++
			row = append(row, v)
		}
		if bad != nil {
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

// readParams reads want numbers, one per line (blank lines and # comments
// skipped).
func readParams(path string, want int) ([]float64, error) {
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
		v, err := data.ParseNumber(text)
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
	if len(phi) != want {
		return nil, fmt.Errorf("%s: %d parameters, but this model (see --hidden, --df and the data's feature count) has %d",
			path, len(phi), want)
	}
	return phi, nil
}
