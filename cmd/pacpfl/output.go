package main

import (
	"errors"
	"io"

	"github.com/pacpfl/pacpfl/outfile"
	"github.com/pacpfl/pacpfl/report"
)

// The CLI writes every file through package outfile; these wrappers turn its
// path errors into usage errors (exit status 2).

const outReplace = outfile.Replace

func usageOf(err error) error {
	var bp *outfile.BadPathError
	if errors.As(err, &bp) {
		return usageError{err}
	}
	return err
}

// outputDest is how a resolved path is written.
type outputDest struct{ kind outfile.Kind }

func resolveOutput(flag, path string) (*outputDest, error) {
	d, err := outfile.Resolve(flag, path)
	if err != nil {
		return nil, usageOf(err)
	}
	return &outputDest{d.Kind}, nil
}

func pathErr(err error) error { return outfile.Cause(err) }

func checkOutput(flag, path string) error { return usageOf(outfile.Check(flag, path)) }

func writeOutput(stdout io.Writer, flag, path string, data []byte) error {
	return usageOf(outfile.Write(stdout, flag, path, data))
}

func writeOutputStream(stdout io.Writer, flag, path string, write func(io.Writer) error) error {
	return usageOf(outfile.WriteStream(stdout, flag, path, write))
}

func writeSecret(flag, path string, data []byte) error {
	return usageOf(outfile.WriteSecret(flag, path, data))
}

// checkedWriter remembers the first write error (a full disk, a closed
// pipe), so that a command whose output was lost does not exit 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// writeJSON writes v, indented, to path ("-": stdout) with writeOutput,
// every NaN and ±Inf as null (report.Marshal).
func writeJSON(stdout io.Writer, path string, v any) error {
	data, err := report.Marshal(v, true)
	if err != nil {
		return err
	}
	return writeOutput(stdout, "--json", path, append(data, '\n'))
}

// jsonLine writes v as one compact JSON line (report.Marshal).
func jsonLine(w io.Writer, v any) error {
	data, err := report.Marshal(v, false)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
