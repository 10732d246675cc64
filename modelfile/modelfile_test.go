package modelfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gpModel() *Model {
	return &Model{
		Kind: KindGP, Task: TaskRegression, Features: []string{"hour", "temp °C"}, Target: "kWh", ClientColumn: "house",
		XMean: []float64{12, -0.0}, XStd: []float64{7, math.SmallestNonzeroFloat64}, YMean: 3.25, YStd: 1.5,
		GP: &GPConfig{D: 2, DF: 2, MeanHidden: []int{8, 8}, KernelHidden: []int{8}, Beta: "m",
			Inference: &GPInference{Mode: InferenceSparse, Inducing: 256, Seed: 1<<64 - 2}},
		K: 2, Dim: 3, Particles: []float64{1, -2, 3e-300, math.Pi, 0.1, -0.0}, Seed: 1<<64 - 1,
		Clients: []Client{
			{ID: "h1", X: []float64{1, 2, 3, 4}, Y: []float64{0.5, -0.5}},
			{ID: "h,2\"", X: []float64{}, Y: []float64{}},
		},
		Training: map[string]string{"data": "pv.csv", "rounds": "100"},
	}
}

func bnnModel() *Model {
	return &Model{
		Kind: KindBNN, Task: TaskClassification, Features: []string{"a", "b", "c"}, Target: "label",
		ClientColumn: "site",
		Classes:      []string{"cat", "dog"}, XMean: []float64{0, 1, 2}, XStd: []float64{1, 1, 2}, YMean: 0, YStd: 1,
		BNN: &BNNConfig{Arch: "mlp", InC: 3, InH: 1, InW: 1, Hidden: 4, Classes: 2, Particles: 2, Steps: 10, LR: 1e-3,
			AlphaSamples: 5},
		K: 1, Dim: 5, Particles: []float64{1, 2, 3, 4, 5}, Seed: 7,
		Clients: []Client{{ID: "s", X: []float64{1, 2, 3}, Y: []float64{1}}},
	}
}

func bitsEqual(t *testing.T, a, b []float64) {
	t.Helper()
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, math.Float64bits(a[i]), math.Float64bits(b[i]), "value %d: %v vs %v", i, a[i], b[i])
	}
}

func TestRoundTripBitExact(t *testing.T) {
	for _, m := range []*Model{gpModel(), bnnModel()} {
		b, err := Encode(m)
		require.NoError(t, err)
		got, err := Decode(b)
		require.NoError(t, err)
		bitsEqual(t, m.Particles, got.Particles)
		bitsEqual(t, m.XMean, got.XMean)
		bitsEqual(t, m.XStd, got.XStd)
		for i := range m.Clients {
			bitsEqual(t, m.Clients[i].X, got.Clients[i].X)
			bitsEqual(t, m.Clients[i].Y, got.Clients[i].Y)
		}
		got.Particles, got.XMean, got.XStd, got.Clients = m.Particles, m.XMean, m.XStd, m.Clients
		assert.Equal(t, m, got)
		again, err := Encode(got)
		require.NoError(t, err)
		assert.Equal(t, b, again, "encoding is deterministic")
	}
}

// Load reads what Encode wrote; its errors name the file and keep their
// kind.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	m := gpModel()
	b, err := Encode(m)
	require.NoError(t, err)
	path := filepath.Join(dir, "m.pacpfl")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	got, err := Load(path)
	require.NoError(t, err)
	bitsEqual(t, m.Particles, got.Particles)
	assert.Equal(t, m.Clients[0].ID, got.Clients[0].ID)

	_, err = Load(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, filepath.Join(dir, "missing"))

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, b[:len(b)-1], 0o644))
	_, err = Load(bad)
	assert.ErrorIs(t, err, ErrTruncated)
	assert.ErrorContains(t, err, bad+": ")
}

func TestDecodeTruncated(t *testing.T) {
	b, err := Encode(gpModel())
	require.NoError(t, err)
	for n := 0; n < len(b); n++ {
		_, err := Decode(b[:n])
		require.ErrorIs(t, err, ErrTruncated, "prefix of %d bytes", n)
	}
	_, err = Decode(b[:len(b)-5])
	assert.ErrorContains(t, err, "model file truncated: the header announces")
}

func TestDecodeCorrupted(t *testing.T) {
	b, err := Encode(bnnModel())
	require.NoError(t, err)
	for i := range b {
		for _, flip := range []byte{1, 0x80} {
			c := append([]byte(nil), b...)
			c[i] ^= flip
			m, err := Decode(c)
			require.Error(t, err, "byte %d ^ %#x", i, flip)
			require.Nil(t, m)
			switch {
			case i < 8:
				require.ErrorIs(t, err, ErrNotModel)
			case i < 12:
				require.ErrorIs(t, err, ErrVersion)
			case i < 20:
				require.True(t, errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt), "byte %d: %v", i, err)
			default:
				require.ErrorIs(t, err, ErrCorrupt, "byte %d", i)
			}
		}
	}
	_, err = Decode(append(b, 0))
	assert.ErrorContains(t, err, "model file corrupted: 1 bytes after the end of the model")
	_, err = Decode([]byte("house,x,y\n1,2,3\n"))
	assert.ErrorIs(t, err, ErrNotModel)
}

func TestDecodeOtherVersion(t *testing.T) {
	b, err := Encode(gpModel())
	require.NoError(t, err)
	require.Equal(t, uint32(2), binary.LittleEndian.Uint32(b[8:12]), "writes version 2")
	for _, v := range []uint32{0, 3} {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(c[8:12], v)
		_, err := Decode(c)
		require.ErrorIs(t, err, ErrVersion)
		assert.Contains(t, err.Error(), "this pacpfl reads versions 1 to 2")
	}
	binary.LittleEndian.PutUint32(b[8:12], 3)
	_, err = Decode(b)
	assert.ErrorContains(t, err,
		"the file is format version 3, this pacpfl reads versions 1 to 2 (written by a newer pacpfl")
}

// A version 1 file, written by pacpfl before it recorded the GP inference
// (testdata/v1_gp_sites.model: pacpfl train --data examples/sites.csv
// --client-column site --target-column load --features
// temperature,humidity --split-column split --new-clients site10 --rounds
// 30 --k 2 --bound-samples 0 --bound-trained-samples 0 --save …, at commit
// c964bf0), still loads, with no inference: the exact GP, as it meant then.
// (cmd/pacpfl's TestPredictOldModelFile checks its predictions.) A
// version 1 file cannot carry an inference.
func TestDecodeVersion1(t *testing.T) {
	b, err := os.ReadFile("testdata/v1_gp_sites.model")
	require.NoError(t, err)
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(b[8:12]))
	m, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, KindGP, m.Kind)
	assert.Equal(t, []string{"temperature", "humidity"}, m.Features)
	assert.Equal(t, 2, m.K)
	assert.Len(t, m.Clients, 9)
	require.NotNil(t, m.GP)
	assert.Nil(t, m.GP.Inference, "a version 1 file has no inference: the exact GP")
	// Written again, it is version 2 and reads back the same.
	again, err := Encode(m)
	require.NoError(t, err)
	m2, err := Decode(again)
	require.NoError(t, err)
	assert.Equal(t, m, m2)

	g := gpModel()
	b, err = Encode(g)
	require.NoError(t, err)
	body := b[:len(b)-checksumSize]
	binary.LittleEndian.PutUint32(body[8:12], 1)
	_, err = Decode(resign(body))
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "a version 1 file with a GP inference")
	g.GP.Inference = nil
	b, err = Encode(g)
	require.NoError(t, err)
	body = b[:len(b)-checksumSize]
	binary.LittleEndian.PutUint32(body[8:12], 1)
	m, err = Decode(resign(body))
	require.NoError(t, err, "a version 1 GP file without an inference")
	assert.Nil(t, m.GP.Inference)
}

// resign rewrites the length and checksum of b (at least the header) so
// that the body is whatever follows the header: how a malformed body with
// a valid checksum is made.
func resign(b []byte) []byte {
	if len(b) < headerSize {
		return b
	}
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(c[12:20], uint64(len(c)-headerSize))
	sum := sha256.Sum256(c)
	return append(c, sum[:]...)
}

func TestDecodeMalformedBody(t *testing.T) {
	b, err := Encode(gpModel())
	require.NoError(t, err)
	body := b[:len(b)-checksumSize]
	// One float missing, one too many.
	_, err = Decode(resign(body[:len(body)-8]))
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "the description announces")
	_, err = Decode(resign(append(append([]byte(nil), body...), make([]byte, 8)...)))
	assert.ErrorIs(t, err, ErrMalformed)
	// A NaN particle.
	m := gpModel()
	m.Particles[3] = math.NaN()
	_, err = Encode(m)
	assert.ErrorContains(t, err, "particles: value 3 is NaN")
	// Names, shapes, configuration.
	for name, mod := range map[string]func(m *Model){
		"repeated feature": func(m *Model) { m.Features[1] = m.Features[0] },
		"empty client":     func(m *Model) { m.Clients[0].ID = "" },
		"zero std":         func(m *Model) { m.XStd[0] = 0 },
		"client shape":     func(m *Model) { m.Clients[0].X = m.Clients[0].X[:3] },
		"gp d":             func(m *Model) { m.GP.D = 3 },
		"kind":             func(m *Model) { m.Kind = "svm" },
		"gp classifies":    func(m *Model) { m.Task = TaskClassification; m.Classes = []string{"a", "b"} },
		"particles":        func(m *Model) { m.Particles = m.Particles[:5] },
		"inference mode":   func(m *Model) { m.GP.Inference.Mode = "fast" },
		"inference M":      func(m *Model) { m.GP.Inference.Inducing = -1 },
		"empty mode":       func(m *Model) { m.GP.Inference.Mode = "" },
	} {
		m := gpModel()
		mod(m)
		_, err := Encode(m)
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
	m = bnnModel()
	m.Clients[0].Y[0] = 2
	_, err = Encode(m)
	assert.ErrorContains(t, err, `client "s": label 2 is not a class 0..1`)
}
