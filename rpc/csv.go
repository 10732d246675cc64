package rpc

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// A federation of a CSV file: each client process reads its own file (its
// rows of the pooled file the server reads, with the same header). It
// registers with the size and SHA-256 of its raw training rows; the server,
// which reads the pooled file to standardise, evaluate and report, checks
// them and sends the standardisation of the pooled training rows (and, for
// classification, the class labels) in its Welcome; the client applies it
// to its rows.

// CSVDataHint is what to check when a client's file does not hash to the
// rows the server expects (ServerConfig.DataHint of CSVServer).
const CSVDataHint = "check the client's file and its --client index (the order of first appearance among the " +
	"existing clients of the server's file), and --client-column, --target-column, --features, --split-column, " +
	"--test-fraction, " +
	"--drop-missing, --seed"

// DatasetServer is the coordinator's view of a data set every client
// process regenerates from the same settings: the number of clients and
// the DataHash of each existing client's training data, so that a client
// started with other data settings is refused. The caller sets the model
// (ModelKind, Dim, Beta) and the transport.
func DatasetServer(ds *data.Dataset) ServerConfig {
	h := make([][]byte, len(ds.Existing))
	for i := range ds.Existing {
		h[i] = DataHash(&ds.Existing[i])
	}
	return ServerConfig{Clients: len(ds.Existing), DataHashes: h}
}

// CSVServer is the coordinator's view of the pooled CSV file rec, federated
// as fed: the hashes of every existing client's raw training rows (what
// each client process hashes before it knows the standardisation), the
// hint, the standardisation and the class labels it sends. The caller sets
// the model (ModelKind, Dim, Beta) and the transport.
func CSVServer(rec *data.Records, fed *data.Federated) ServerConfig {
	h := make([][]byte, len(fed.ExistingRows))
	for i, cr := range fed.ExistingRows {
		h[i] = csvRowsHash(rec, cr.Train)
	}
	return ServerConfig{Clients: len(h), DataHashes: h, DataHint: CSVDataHint, Scaling: &fed.Scaling,
		Classes: fed.ClassNames}
}

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

// csvRowsHash is the data hash of rec's rows: DataHash of the raw rows for
// regression; for classification the raw inputs and the class labels as
// text (a client's own file may lack some classes, so its class indices
// are not the pooled file's).
func csvRowsHash(rec *data.Records, rows []int) []byte {
	cd := rawClientData(rec, rows)
	if rec.Task != data.Classification {
		return DataHash(&cd)
	}
	h := sha256.New()
	h.Write(DataHash(&data.ClientData{X: cd.X}))
	for _, y := range cd.Y {
		l := rec.Classes[int(y)]
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		h.Write([]byte(l))
	}
	return h.Sum(nil)
}

// CSVBNNKind is the model kind of a classification client of a CSV file
// with d features, hidden units and L = samples weight samples:
// everything of the MLP but its number of classes, which the client
// learns from the server's Welcome.
func CSVBNNKind(d, hidden, samples int) string {
	return fmt.Sprintf("bnn-csv mlp inputs=%d hidden=%d L=%d", d, hidden, samples)
}

// CSVBNNModel is the BNN of a classification client of a CSV file: an MLP
// over d features with hidden units and classes outputs, trained as base
// says (weight samples, threads, posterior inference). A network that
// cannot be built is a ConfigError.
func CSVBNNModel(base *fl.BNNModel, d, hidden, classes int) (*fl.BNNModel, error) {
	m := &fl.BNNModel{Samples: base.Samples, Threads: base.Threads, Posterior: base.Posterior,
		Model: lml.BNN{Arch: lml.ArchMLP, InC: d, InH: 1, InW: 1, Hidden: hidden, Classes: classes}.WithDefaults()}
	if err := m.Model.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	return m, nil
}

// CSVClientOptions configure a client process of its own CSV file
// (CSVClient).
type CSVClientOptions struct {
	ID   int
	Path string
	// Spec, TestFraction and Seed are the server's: the client's
	// train/test split depends only on its own rows, its ID and the seed.
	Spec         data.CSVSpec
	TestFraction float64
	Seed         uint64
	// Inference is a regression client's GP inference.
	Inference fl.GPInference
	// BNN and Hidden are a classification client's model (CSVBNNModel).
	BNN    *fl.BNNModel
	Hidden int
	// Notes, if set, receives a note on rows dropped for a missing value.
	Notes io.Writer
}

// CSVClient reads a client's own file and returns its configuration: a GP
// (regression) or BNN (classification) client whose rows are standardised,
// and whose labels are mapped to the class indices, with what the
// server's Welcome sends.
func CSVClient(o CSVClientOptions) (ClientConfig, error) {
	rec, err := data.ReadCSVFile(o.Path, o.Spec)
	if err != nil {
		return ClientConfig{}, err
	}
	if len(rec.Clients) != 1 {
		return ClientConfig{}, option.Format("", []string{"Spec.ClientColumn"}, "%[2]s holds the rows of %[3]d "+
			"clients (%[4]s): a client's file holds its own rows only, one value of %[1]s %[5]q", o.Path,
			len(rec.Clients), quoteFew(rec.Clients), o.Spec.ClientColumn)
	}
	if rec.Dropped > 0 && o.Notes != nil {
		fmt.Fprintf(o.Notes, "note: %s: %d row(s) with a missing value dropped (--drop-missing)\n", o.Path, rec.Dropped)
	}
	// The server's train/test split. (Federated as regression: only the
	// split is used, and a client may hold a single class.)
	split := *rec
	split.Task = data.Regression
	fed, err := split.Federate(data.FederateConfig{TestFraction: o.TestFraction, Seed: o.Seed})
	if err != nil {
		return ClientConfig{}, err
	}
	rows := fed.ExistingRows[0].Train
	cd := rawClientData(rec, rows)
	d := rec.D()
	scale := func(s *data.Scaling) error {
		if s == nil {
			return fmt.Errorf("the server sent no standardisation for %s: is it running with --data FILE.csv?", o.Path)
		}
		if err := s.Check(d); err != nil {
			return fmt.Errorf("the server's standardisation for %s: %w", o.Path, err)
		}
		s.ScaleX(cd.X)
		return nil
	}
	if rec.Task != data.Classification {
		cfg := GPClient(o.ID, &cd, d, o.Inference)
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
	prepare := func(s *data.Scaling, classes []string) (int, error) {
		if len(classes) < 2 {
			return 0, fmt.Errorf("the server sent %d class labels for %s: "+
				"is it running with --data FILE.csv --task classification?", len(classes), o.Path)
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
				return 0, fmt.Errorf("%s: class %q is not one of the server's classes %s", o.Path, l, quoteFew(classes))
			}
			cd.Y[i] = float64(k)
		}
		var err error
		if model, err = CSVBNNModel(o.BNN, d, o.Hidden, len(classes)); err != nil {
			return 0, err
		}
		return model.Dim(), nil
	}
	return ClientConfig{ID: o.ID, ModelKind: CSVBNNKind(d, o.Hidden, o.BNN.Samples), DataSize: cd.M(),
		DataHash: csvRowsHash(rec, rows), Prepare: prepare,
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
