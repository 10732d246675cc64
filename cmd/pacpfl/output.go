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

func checkOutput(flag, path string) error { return usageOf(outfile.Check(flag, path)) }

func writeOutput(stdout io.Writer, flag, path string, data []byte) error {
	return usageOf(outfile.Write(stdout, flag, path, data))
}

func writeOutputStream(stdout io.Writer, flag, path string, write func(io.Writer) error) error {
	return usageOf(outfile.WriteStream(stdout, flag, path, write))
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
