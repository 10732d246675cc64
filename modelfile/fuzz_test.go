package modelfile

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to the model-file reader, as they are
// and re-signed (length and checksum made valid, so that the body parser is
// explored too): it must never panic, and a model it accepts must pass
// Validate and survive an encode/decode round trip. The seed corpus is in
// testdata/fuzz/FuzzDecode, with the version 1 file testdata/v1_gp_sites.model.
func FuzzDecode(f *testing.F) {
	for _, m := range []*Model{gpModel(), bnnModel()} {
		b, err := Encode(m)
		require.NoError(f, err)
		f.Add(b)
		f.Add(b[:len(b)-checksumSize])
		f.Add(b[:40])
	}
	f.Add([]byte(Signature))
	if old, err := os.ReadFile("testdata/v1_gp_sites.model"); err == nil {
		f.Add(old) // a version 1 file (TestDecodeVersion1)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, resign(b)} {
			m, err := Decode(in)
			if err != nil {
				if m != nil {
					t.Fatal("an error with a result")
				}
				continue
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("accepted an invalid model: %v", err)
			}
			again, err := Encode(m)
			if err != nil {
				t.Fatalf("accepted model does not encode: %v", err)
			}
			if _, err := Decode(again); err != nil {
				t.Fatalf("re-encoded model does not decode: %v", err)
			}
		}
	})
}
