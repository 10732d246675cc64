package data

import (
	"bytes"
	"testing"
)

// FuzzReadIDX feeds arbitrary bytes to the IDX reader: it must never panic
// or allocate beyond the bytes present, and what it accepts must be
// consistent (the dimensions multiply to the payload length) and, for a raw
// file, re-encode to exactly the input. The seed corpus is in
// testdata/fuzz/FuzzReadIDX.
func FuzzReadIDX(f *testing.F) {
	good := encodeIDX(0x08, []uint32{3, 2, 2}, seq(12))
	f.Add(good)
	f.Add(gzipBytes(f, good))
	f.Add(encodeIDX(0x08, []uint32{4}, seq(4)))
	f.Add(encodeIDX(0x08, []uint32{1 << 15, 1 << 15}, seq(8)))
	f.Add(encodeIDX(0x0D, []uint32{2}, seq(8)))
	f.Add(good[:7])
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := ReadIDX(bytes.NewReader(b), "fuzz")
		if err != nil {
			if idx != nil {
				t.Fatal("an error with a result")
			}
			return
		}
		if len(idx.Dims) < 1 || len(idx.Dims) > MaxIDXDims {
			t.Fatalf("accepted %d dimensions", len(idx.Dims))
		}
		n := 1
		for _, d := range idx.Dims {
			if d < 1 {
				t.Fatalf("accepted dims %v", idx.Dims)
			}
			n *= d
		}
		if n != len(idx.Data) || n > MaxIDXElements {
			t.Fatalf("dims %v for %d bytes", idx.Dims, len(idx.Data))
		}
		if len(b) > 0 && b[0] == 0 {
			dims := make([]uint32, len(idx.Dims))
			for i, d := range idx.Dims {
				dims[i] = uint32(d)
			}
			if !bytes.Equal(encodeIDX(0x08, dims, idx.Data), b) {
				t.Fatal("raw file does not re-encode to itself")
			}
		}
	})
}
