package predict_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
)

// PredictFile is Load, ReadCSV and Predict on the files, with the
// overrides applied; a requested M above a client's rows is a ConfigError
// that names the flag to change.
func TestPredictFile(t *testing.T) {
	mf, ds := trainedModel(t)
	b, err := modelfile.Encode(mf)
	require.NoError(t, err)
	model := filepath.Join(t.TempDir(), "m.pacpfl")
	require.NoError(t, os.WriteFile(model, b, 0o644))
	rows := writeCSV(t, ds, true)
	o := predict.FileOptions{Model: model, Data: rows, ContextColumn: "ctx"}
	require.NoError(t, o.Check())
	got, err := predict.PredictFile(o)
	require.NoError(t, err)
	p, err := predict.New(mf)
	require.NoError(t, err)
	rec, err := p.ReadCSV(rows, "ctx")
	require.NoError(t, err)
	want, err := p.Predict(rec)
	require.NoError(t, err)
	require.Equal(t, len(want.Clients), len(got.Clients))
	for i := range want.Clients {
		mixtureBits(t, "client", want.Clients[i].Mixture, got.Clients[i].Mixture)
	}

	newRows := len(ds.New[0].Y)
	o.Override = predict.Override{
		Mode:        modelfile.InferenceSparse,
		Inducing:    newRows + 1,
		SetMode:     true,
		SetInducing: true,
	}
	_, err = predict.PredictFile(o)
	var ce *predict.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), `client "n0": --inducing `)
	assert.Contains(t, err.Error(), "(give --inducing ")
}

// Unusable options are ConfigErrors before any file is read; an override
// of a BNN model's inference too; other errors are not.
func TestFileOptionsRefuse(t *testing.T) {
	var ce *predict.ConfigError
	for o, want := range map[*predict.FileOptions]string{
		{Data: "d"}:  "--model FILE is required",
		{Model: "m"}: "--data FILE.csv is required",
		{Model: "m", Data: "d", Override: predict.Override{Mode: "fast", SetMode: true}}: `--gp-inference "fast": ` +
			`want exact, sparse or auto`,
		{Model: "m", Data: "d", Override: predict.Override{Inducing: -1}}: "--inducing -1: want at " +
			"least 1",
	} {
		err := o.Check()
		require.ErrorAs(t, err, &ce, want)
		assert.Contains(t, err.Error(), want)
	}
	_, err := predict.PredictFile(predict.FileOptions{Model: filepath.Join(t.TempDir(), "none"), Data: "d"})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, errors.As(err, &ce))
	assert.Nil(t, predict.Explain(nil))
	other := errors.New("other")
	assert.Same(t, other, predict.Explain(other))
}
