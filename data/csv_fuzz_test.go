package data

import (
	"bytes"
	"math"
	"testing"
)

// FuzzReadCSV feeds arbitrary bytes to the CSV reader with a regression and
// a classification spec: it must never panic, and what it accepts must be
// consistent (shapes, finite values, valid client and class indices,
// increasing lines); Federate on it must return a data set or an error,
// never panic. The seed corpus is in testdata/fuzz/FuzzReadCSV.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("client,x,y\na,1,2\na,2,3\nb,3,4\nb,4,5\n"))
	f.Add([]byte("\uFEFF# c\nclient,\"x\",z,y,part\n\"a\",1e3,.5,cat,train\na,-2,5.,dog,test\nb,NA,1,cat,train\n"))
	f.Add([]byte("client,x,y\na,\"1\n2\",3\n"))
	f.Add([]byte("client,x,y,part\na,1,2,train\na,1,2,train\na,1,2,test\nb,1,3,train\nb,2,1,train\n"))
	f.Add([]byte("client,x,x,y\n"))
	f.Add([]byte("client,x,y\na,1e400,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		specs := []CSVSpec{
			{ClientColumn: "client", TargetColumn: "y", MaxLine: 1 << 12},
			{ClientColumn: "client", TargetColumn: "y", Task: Classification, SplitColumn: "part", DropMissing: true,
				MaxLine: 1 << 12},
			{ClientColumn: "client", TargetColumn: "y", ContextColumn: "part", TargetOptional: true,
				Features: []string{"x"}, MaxLine: 1 << 12},
		}
		for si, spec := range specs {
			r, err := ReadCSV(bytes.NewReader(b), "fuzz.csv", spec)
			if err != nil {
				if r != nil {
					t.Fatal("an error with a result")
				}
				continue
			}
			n, d := r.Rows(), r.D()
			if n == 0 || d == 0 || len(r.X) != n*d || len(r.Y) != n || len(r.Client) != n || len(r.Test) != n ||
				len(r.Context) != n {
				t.Fatalf("spec %d: inconsistent shapes: %d rows, %d features, %d X, %d Y", si, n, d, len(r.X), len(r.Y))
			}
			for _, v := range r.X {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("spec %d: accepted a non-finite feature %v", si, v)
				}
			}
			for i, c := range r.Client {
				if c < 0 || c >= len(r.Clients) || r.Clients[c] == "" {
					t.Fatalf("spec %d: row %d has client index %d of %d", si, i, c, len(r.Clients))
				}
				if i > 0 && r.Line[i] <= r.Line[i-1] {
					t.Fatalf("spec %d: lines not increasing: %v", si, r.Line)
				}
				y := r.Y[i]
				switch {
				case spec.TargetOptional && math.IsNaN(y) && !r.Context[i]:
				case math.IsNaN(y) || math.IsInf(y, 0):
					t.Fatalf("spec %d: row %d has target %v", si, i, y)
				case spec.Task == Classification && (y < 0 || int(y) >= len(r.Classes) || y != math.Trunc(y)):
					t.Fatalf("spec %d: row %d has class %v of %d", si, i, y, len(r.Classes))
				}
			}
			if spec.TargetOptional {
				continue
			}
			fd, err := r.Federate(FederateConfig{TestFraction: 0.3, Seed: 1, MinTrain: 1})
			if err != nil {
				continue
			}
			rows := 0
			for _, g := range [][]ClientData{fd.Existing, fd.New} {
				for _, c := range g {
					rows += len(c.Y) + len(c.YTest)
					for _, v := range append(append([]float64{}, c.X...), c.Y...) {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("spec %d: federated a non-finite value", si)
						}
					}
				}
			}
			if rows != n {
				t.Fatalf("spec %d: federated %d of %d rows", si, rows, n)
			}
		}
	})
}
