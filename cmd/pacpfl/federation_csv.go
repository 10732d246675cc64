package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/rpc"
)

// pacpfl server / client --data FILE.csv: each client process reads its own
// CSV file (its rows of the pooled file the server reads, with the same
// header). It registers with the size and SHA-256 of its raw training rows;
// the server, which reads the pooled file to standardise, evaluate and
// report as train does, checks them and sends the standardisation of the
// pooled training rows (and, for classification, the class labels) in its
// Welcome; the client applies it to its rows.

// csvFedHint is what to check when a client's file does not hash to the
// rows the server expects.
const csvFedHint = "check the client's file and its --client index (the order of first appearance among the existing clients of the server's file), and --client-column, --target-column, --features, --split-column, --test-fraction, --drop-missing, --seed"

// rawClientData copies the given rows of rec, unstandardised, as training
// data (Y: the value, or the class index among rec.Classes).
func rawClientData(rec *data.Records, rows []int) data.ClientData {
	var cd data.ClientData
	for _, i := range rows {
		cd.X = append(cd.X, rec.Row(i)...)
		cd.Y = append(cd.Y, rec.Y[i])
	}
	return cd
}

// csvRowsHash is the data hash of rec's rows: rpc.DataHash of the raw rows
// for regression; for classification the raw inputs and the class labels
// as text (a client's own file may lack some classes, so its class
// indices are not the pooled file's).
func csvRowsHash(rec *data.Records, rows []int) []byte {
	cd := rawClientData(rec, rows)
	if rec.Task != data.Classification {
		return rpc.DataHash(&cd)
	}
	h := sha256.New()
	h.Write(rpc.DataHash(&data.ClientData{X: cd.X}))
	for _, y := range cd.Y {
		l := rec.Classes[int(y)]
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		h.Write([]byte(l))
	}
	return h.Sum(nil)
}

// csvDataHashes are the hashes of the existing clients' raw training rows:
// what each client process hashes before it knows the standardisation.
func csvDataHashes(rec *data.Records, fed *data.Federated) [][]byte {
	out := make([][]byte, len(fed.ExistingRows))
	for i, cr := range fed.ExistingRows {
		out[i] = csvRowsHash(rec, cr.Train)
	}
	return out
}

// csvBNNKind is the model kind of a classification client of a CSV file
// with d features: everything of the MLP but its number of classes, which
// the client learns from the server's Welcome.
func csvBNNKind(bf *bnnFlags, d int) string {
	return fmt.Sprintf("bnn-csv mlp inputs=%d hidden=%d L=%d", d, bf.hidden, bf.samples)
}

// csvBNN is the MLP of train --data FILE.csv --task classification.
func csvBNN(bf *bnnFlags, d, classes int) (*fl.BNNModel, error) {
	m := bf.bnnModel()
	m.Model = lml.BNN{Arch: lml.ArchMLP, InC: d, InH: 1, InW: 1, Hidden: bf.hidden, Classes: classes}.WithDefaults()
	if err := m.Model.Validate(); err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// csvClient reads a client's own file and returns its configuration: a GP
// (regression) or BNN (classification) client whose rows are standardised
// with what the server sends.
func csvClient(c *csvFlags, f *trainFlags, bf *bnnFlags, id int, stderr io.Writer) (rpc.ClientConfig, error) {
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
	// only on its own rows, its ID and the seed. (Federated as regression:
	// only the split is used, and a client may hold a single class.)
	split := *rec
	split.Task = data.Regression
	fed, err := split.Federate(data.FederateConfig{TestFraction: c.testFraction, Seed: f.seed})
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	rows := fed.ExistingRows[0].Train
	cd := rawClientData(rec, rows)
	d := rec.D()
	scale := func(s *data.Scaling) error {
		if s == nil {
			return fmt.Errorf("the server sent no standardisation for %s: is it running with --data FILE.csv?", c.path)
		}
		if err := s.Check(d); err != nil {
			return fmt.Errorf("the server's standardisation for %s: %w", c.path, err)
		}
		s.ScaleX(cd.X)
		return nil
	}
	if rec.Task != data.Classification {
		cfg := rpc.GPClient(id, &cd, d, f.inference())
		cfg.Prepare = func(s *data.Scaling, _ []string) (int, error) {
			if err := scale(s); err != nil {
				return 0, err
			}
			s.ScaleY(cd.Y)
			return 0, nil
		}
		return cfg, nil
	}
	var model *fl.BNNModel
	return rpc.ClientConfig{ID: id, ModelKind: csvBNNKind(bf, d), DataSize: cd.M(), DataHash: csvRowsHash(rec, rows),
		Prepare: func(s *data.Scaling, classes []string) (int, error) {
			if len(classes) < 2 {
				return 0, fmt.Errorf("the server sent %d class labels for %s: is it running with --data FILE.csv --task classification?", len(classes), c.path)
			}
			if err := scale(s); err != nil {
				return 0, err
			}
			index := make(map[string]int, len(classes))
			for i, l := range classes {
				index[l] = i
			}
			for i, y := range cd.Y {
				l := rec.Classes[int(y)]
				k, ok := index[l]
				if !ok {
					return 0, fmt.Errorf("%s: class %q is not one of the server's classes %s", c.path, l, quoteFew(classes))
				}
				cd.Y[i] = float64(k)
			}
			var err error
			if model, err = csvBNN(bf, d, len(classes)); err != nil {
				return 0, err
			}
			return model.Dim(), nil
		},
		New: func(string) (fl.Client, error) { return model.NewClient(&cd) }}, nil
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
