package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// A client reading its own rows of a CSV file registers with the hash the
// server computes from the pooled file, for regression and classification,
// and learns its standardisation (and classes) from the Welcome; a file
// with several clients' rows is refused.
func TestCSVClientMatchesServer(t *testing.T) {
	dir := t.TempDir()
	for _, task := range []data.Task{data.Regression, data.Classification} {
		var pooled strings.Builder
		pooled.WriteString("site,x,y\n")
		own := make([]string, 3)
		for c := range 3 {
			var b strings.Builder
			b.WriteString("site,x,y\n")
			for i := range 12 {
				y := fmt.Sprint(float64(i*c) / 3)
				if task == data.Classification {
					y = []string{"a", "b", "c"}[(i+c)%3]
				}
				fmt.Fprintf(&b, "s%d,%d.5,%s\n", c, i+c, y)
				fmt.Fprintf(&pooled, "s%d,%d.5,%s\n", c, i+c, y)
			}
			own[c] = filepath.Join(dir, fmt.Sprintf("%s-%d.csv", task, c))
			os.WriteFile(own[c], []byte(b.String()), 0o644)
		}
		spec := data.CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: task}
		rec, err := data.ReadCSV(strings.NewReader(pooled.String()), "pooled", spec)
		if err != nil {
			t.Fatal(err)
		}
		fed, err := rec.Federate(data.FederateConfig{TestFraction: 0.25, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		sc := CSVServer(rec, fed)
		if sc.Clients != 3 || sc.DataHint != CSVDataHint || sc.Scaling != &fed.Scaling {
			t.Fatalf("%s: server %+v", task, sc)
		}
		for c := range 3 {
			cfg, err := CSVClient(CSVClientOptions{ID: c, Path: own[c], Spec: spec, TestFraction: 0.25, Seed: 4,
				BNN: fl.NewBNNModel(lml.BNN{}), Hidden: 4})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(cfg.DataHash, sc.DataHashes[c]) || cfg.DataSize != len(fed.Dataset.Existing[c].Y) {
				t.Errorf("%s client %d: hash or size (%d) differ from the server's", task, c, cfg.DataSize)
			}
			dim, err := cfg.Prepare(sc.Scaling, sc.Classes)
			if err != nil {
				t.Fatalf("%s client %d: Prepare: %v", task, c, err)
			}
			if task == data.Classification {
				m, _ := CSVBNNModel(fl.NewBNNModel(lml.BNN{}), 1, 4, 3)
				if dim != m.Dim() || cfg.ModelKind != CSVBNNKind(1, 4, 0) {
					t.Errorf("client %d: dφ %d, kind %q; want %d, %q", c, dim, cfg.ModelKind, m.Dim(),
						CSVBNNKind(1, 4, 0))
				}
			} else if cfg.ModelKind != ModelGP {
				t.Errorf("client %d: kind %q", c, cfg.ModelKind)
			}
			if _, err := cfg.New("1"); err != nil {
				t.Errorf("%s client %d: New: %v", task, c, err)
			}
		}
	}
	pooled := filepath.Join(dir, "pooled.csv")
	os.WriteFile(pooled, []byte("site,x,y\ns0,1,2\ns0,2,3\ns1,1,2\ns1,2,3\n"), 0o644)
	_, err := CSVClient(CSVClientOptions{Path: pooled, Spec: data.CSVSpec{ClientColumn: "site", TargetColumn: "y"}})
	var fe *option.FieldError
	if !errors.As(err, &fe) || fe.Fields[0] != "Spec.ClientColumn" ||
		!strings.Contains(err.Error(), "rows of 2 clients") {
		t.Errorf("a pooled file as a client's: %v", err)
	}
}
