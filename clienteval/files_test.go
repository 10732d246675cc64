package clienteval

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// An evaluation of a file is GP on its rows with φ drawn from the prior,
// and again with that φ read from a file.
func TestEvalGPIsGP(t *testing.T) {
	path := writeFile(t, "d.csv", "x,y\n0.1,0.2\n-0.4,-0.1\n0.7,0.5\n1.0,0.8\n")
	o := GPFile{Data: path, InitSeed: 7, SigmaP: 0.5, Hidden: []int{3}, DF: 2,
		Inference: fl.GPInference{Mode: fl.InferenceExact}}
	got, err := EvalGP(o)
	require.NoError(t, err)
	model := lml.Model{D: 1, DF: 2, MeanHidden: []int{3}, KernelHidden: []int{3}}
	phi, err := GPPrior(model, 0.5, 7)
	require.NoError(t, err)
	want, err := GP(model, o.Inference, []float64{0.1, -0.4, 0.7, 1.0}, []float64{0.2, -0.1, 0.5, 0.8}, phi)
	require.NoError(t, err)
	assert.Equal(t, want.LML, got.LML)
	assert.Equal(t, want.Grad, got.Grad)

	lines := make([]string, len(phi))
	for i, v := range phi {
		lines[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	o.Params, o.InitSeed = writeFile(t, "phi.txt", strings.Join(lines, "\n")+"\n"), -1
	fromFile, err := EvalGP(o)
	require.NoError(t, err)
	assert.Equal(t, want.LML, fromFile.LML)
}

// Unusable options are ConfigErrors, before any file is read; more
// inducing inputs than rows too, and the memory hook's refusal is
// returned as it is.
func TestEvalGPRefuses(t *testing.T) {
	good := GPFile{
		Data:      "/nonexistent",
		InitSeed:  1,
		SigmaP:    0.5,
		DF:        2,
		Inference: fl.GPInference{Mode: fl.InferenceExact},
	}
	for _, c := range []struct {
		change func(*GPFile)
		want   []string // the fields at fault
	}{
		{func(o *GPFile) { o.Data = "" }, []string{"Data"}},
		{func(o *GPFile) { o.Params = "p" }, []string{"Params", "InitSeed"}},
		{func(o *GPFile) { o.DF = 0 }, []string{"DF"}},
		{func(o *GPFile) { o.SigmaP = 0 }, []string{"SigmaP"}},
		{func(o *GPFile) { o.Inference.Mode = "x" }, []string{"Inference.Mode"}},
		{func(o *GPFile) { o.Inference.Inducing = -1 }, []string{"Inference.Inducing"}},
	} {
		o := good
		c.change(&o)
		_, err := EvalGP(o)
		var ce *ConfigError
		var fe *option.FieldError
		require.ErrorAs(t, err, &ce, c.want)
		require.ErrorAs(t, err, &fe, c.want)
		assert.Equal(t, c.want, fe.Fields)
	}
	_, err := EvalGP(good)
	var ce *ConfigError
	require.Error(t, err)
	assert.False(t, errors.As(err, &ce), "a missing file is no ConfigError: %v", err)

	good.Data = writeFile(t, "d.csv", "1,2\n3,4\n")
	o := good
	o.Inference = fl.GPInference{Mode: fl.InferenceSparse, Inducing: 5}
	_, err = EvalGP(o)
	require.ErrorAs(t, err, &ce)
	assert.EqualError(t, err, "Inference.Inducing 5: the data have only 2 rows")
	full := errors.New("no memory")
	o = good
	o.Memory = func(what string, bytes float64) error {
		assert.Equal(t, "--hidden [] --df 2 on 2 samples", what)
		assert.Greater(t, bytes, 0.0)
		return full
	}
	_, err = EvalGP(o)
	assert.Same(t, full, err)
}

// A BNN evaluation of a file is BNN on its rows; the network's input is
// the features (mlp) or an image that must match them (bcnn).
func TestEvalBNN(t *testing.T) {
	path := writeFile(t, "d.csv", "0,0.1,0.2\n1,0.3,0.4\n1,0.5,0.6\n")
	o := BNNFile{
		Data:       path,
		Arch:       lml.ArchMLP,
		Hidden:     3,
		Classes:    2,
		Samples:    2,
		InitSeed:   1,
		SigmaMu:    3,
		SigmaOmega: 1,
	}
	got, err := EvalBNN(o)
	require.NoError(t, err)
	c := BNNConfig{Model: lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 3, Classes: 2}, Samples: 2,
		SigmaMu: 3, SigmaOmega: 1, Seed: 1}
	want, err := BNN(c, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, []float64{0, 1, 1})
	require.NoError(t, err)
	assert.Equal(t, want.LML, got.LML)

	o.Arch, o.Image = lml.ArchBCNN, "28x28"
	_, err = EvalBNN(o)
	assert.ErrorContains(t, err, "2 features per row, the bcnn's 28×28 image needs 784 (see Image)")
	var ce *ConfigError
	var fe *option.FieldError
	for _, c := range []struct {
		change func(*BNNFile)
		want   []string // the fields at fault
	}{
		{func(o *BNNFile) { o.Data = "" }, []string{"Data"}},
		{func(o *BNNFile) { o.InitSeed = -1 }, []string{"InitSeed"}},
		{func(o *BNNFile) { o.Samples = 0 }, []string{"Samples"}},
		{func(o *BNNFile) { o.Hidden = -1 }, []string{"Hidden"}},
		{func(o *BNNFile) { o.SigmaOmega = 0 }, []string{"SigmaMu", "SigmaOmega"}},
		{func(o *BNNFile) { o.Arch = "x" }, []string{"Arch"}},
		{func(o *BNNFile) { o.Image = "3x" }, []string{"Image", "Arch"}},
		{func(o *BNNFile) { o.Arch, o.Image = lml.ArchBCNN, "3x" }, []string{"Image"}},
		{func(o *BNNFile) { o.Classes = 1 }, []string{"Classes"}},
	} {
		o := BNNFile{Data: path, Arch: lml.ArchMLP, Classes: 2, Samples: 2, InitSeed: 1, SigmaMu: 3, SigmaOmega: 1}
		c.change(&o)
		_, err := EvalBNN(o)
		require.ErrorAs(t, err, &ce, c.want)
		require.ErrorAs(t, err, &fe, c.want)
		assert.Equal(t, c.want, fe.Fields)
		if c.want[0] == "SigmaMu" {
			assert.Equal(t, "-a 3 and -b 0: want positive numbers", fe.Message("-a", "-b"))
		}
	}
}

func TestParseImageSize(t *testing.T) {
	h, w, ok := parseImageSize("28X14")
	assert.True(t, ok)
	assert.Equal(t, [2]int{28, 14}, [2]int{h, w})
	for _, s := range []string{"", "28", "0x3", "3x-1", "axb"} {
		_, _, ok := parseImageSize(s)
		assert.False(t, ok, s)
	}
}
