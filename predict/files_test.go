package predict_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/option"
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
	var fe *option.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, []string{"Inducing", "Mode"}, fe.Fields)
	assert.Contains(t, err.Error(), `client "n0": Inducing `)
	assert.Contains(t, fe.Message("-M", "-I"), fmt.Sprintf("(give -M %d or fewer, or -I exact)", newRows))
}

// Unusable options are ConfigErrors before any file is read; an override
// of a BNN model's inference too; other errors are not.
func TestFileOptionsRefuse(t *testing.T) {
	var ce *predict.ConfigError
	var fe *option.FieldError
	for o, want := range map[*predict.FileOptions]string{
		{Data: "d"}:  "Model",
		{Model: "m"}: "Data",
		{Model: "m", Data: "d", Override: predict.Override{Mode: "fast", SetMode: true}}: "Mode",
		{Model: "m", Data: "d", Override: predict.Override{Inducing: -1}}:                "Inducing",
	} {
		err := o.Check()
		require.ErrorAs(t, err, &ce, want)
		require.ErrorAs(t, err, &fe, want)
		assert.Equal(t, []string{want}, fe.Fields)
	}
	_, err := predict.PredictFile(predict.FileOptions{Model: filepath.Join(t.TempDir(), "none"), Data: "d"})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, errors.As(err, &ce))
	assert.Nil(t, predict.Explain(nil))
	other := errors.New("other")
	assert.Same(t, other, predict.Explain(other))
	// The model's own M and a client without context rows are no
	// ConfigErrors, but name the option that helps.
	ex := predict.Explain(&predict.InducingError{Client: "c", M: 9, Rows: 3})
	require.ErrorAs(t, ex, &fe)
	assert.False(t, errors.As(ex, &ce))
	assert.Equal(t, []string{"Inducing", "Mode"}, fe.Fields)
	assert.Contains(t, fe.Message("-M", "-I"), "(give -M 3 or fewer, or -I exact)")
	ex = predict.Explain(&predict.NoContextError{Client: "c", Source: "f.csv", Line: 4})
	require.ErrorAs(t, ex, &fe)
	assert.False(t, errors.As(ex, &ce))
	assert.Equal(t, []string{"ContextColumn"}, fe.Fields)
	assert.Regexp(t, `^f\.csv:4: client "c" is not .* give a -x marking`, fe.Message("-x"))
}
