package main

import (
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/rpc"
)

// pacpfl server / client --data FILE.csv: each client process reads its own
// CSV file (its rows of the pooled file the server reads, with the same
// header). It registers with the size and SHA-256 of its raw training rows;
// the server, which reads the pooled file to standardise, evaluate and
// report as train does, checks them and sends the standardisation of the
// pooled training rows in its Welcome; the client applies it to its rows.
// Only regression (GP clients) for now.

// csvFedHint is what to check when a client's file does not hash to the
// rows the server expects.
const csvFedHint = "check the client's file and its --client index (the order of first appearance among the existing clients of the server's file), and --client-column, --target-column, --features, --split-column, --test-fraction, --drop-missing, --seed"

// rawClientData copies the given rows of rec, unstandardised, as training
// data.
func rawClientData(rec *data.Records, rows []int) data.ClientData {
	var cd data.ClientData
	for _, i := range rows {
		cd.X = append(cd.X, rec.Row(i)...)
		cd.Y = append(cd.Y, rec.Y[i])
	}
	return cd
}

// csvDataHashes are the DataHashes of the existing clients' raw training
// rows: what each client process hashes before it knows the
// standardisation.
func csvDataHashes(rec *data.Records, fed *data.Federated) [][]byte {
	out := make([][]byte, len(fed.ExistingRows))
	for i, cr := range fed.ExistingRows {
		cd := rawClientData(rec, cr.Train)
		out[i] = rpc.DataHash(&cd)
	}
	return out
}

// csvClient reads a client's own file and returns its configuration: a GP
// client whose rows are standardised with what the server sends.
func csvClient(c *csvFlags, f *trainFlags, id int, stderr io.Writer) (rpc.ClientConfig, error) {
	if data.Task(c.task) != data.Regression {
		return rpc.ClientConfig{}, usagef("pacpfl client --data FILE: --task %s is not supported over the network yet (only regression)", c.task)
	}
	rec, err := data.ReadCSVFile(c.path, c.spec())
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	if len(rec.Clients) != 1 {
		return rpc.ClientConfig{}, fmt.Errorf("%s holds the rows of %d clients (%s): a client's file holds its own rows only, one value of --client-column %q",
			c.path, len(rec.Clients), quoteFew(rec.Clients), c.clientCol)
	}
	if rec.Dropped > 0 {
		fmt.Fprintf(stderr, "note: %s: %d row(s) with a missing value dropped (--drop-missing)\n", c.path, rec.Dropped)
	}
	// The same train/test split as the server's: a client's split depends
	// only on its own rows, its ID and the seed.
	fed, err := rec.Federate(data.FederateConfig{TestFraction: c.testFraction, Seed: f.seed})
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	cd := rawClientData(rec, fed.ExistingRows[0].Train)
	cfg := rpc.GPClient(id, &cd, rec.D())
	cfg.Prepare = func(s *data.Scaling) error {
		if s == nil {
			return fmt.Errorf("the server sent no standardisation for %s: is it running with --data FILE.csv?", c.path)
		}
		if err := s.Check(rec.D()); err != nil {
			return fmt.Errorf("the server's standardisation for %s: %w", c.path, err)
		}
		s.ScaleX(cd.X)
		s.ScaleY(cd.Y)
		return nil
	}
	return cfg, nil
}

// quoteFew quotes up to 5 names, then "…".
func quoteFew(names []string) string {
	s := ""
	for i, n := range names {
		if i == 5 {
			return s + ", …"
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", n)
	}
	return s
}
