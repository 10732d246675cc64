package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/methods"
)

// A tiny network on the fake Fashion-MNIST: 20 users of 30 + 5 images.
var tinyGenFLFlags = []string{"--clients", "20", "--train-per-client", "30", "--test-per-client", "5", "--shard-size",
	"20",
	"--hidden", "8", "--prior-rounds", "3", "--prior-epochs", "1", "--rounds", "2", "--local-epochs", "1", "--fraction",
	"0.2",
	"--mc-samples", "3000", "--client-mc-samples", "300", "--personal-epochs", "1", "--test-draws", "2", "--lr", "0.05",
	"--quiet"}

func TestExperimentGenFLShortRun(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	for _, c := range []struct{ partition, prior, objective, setting string }{
		{"iid", "learnt", "f1", "flsob"}, {"iid", "random", "f2", "flsob"}, {"shards", "learnt", "f1", "pfl"},
	} {
		path := filepath.Join(t.TempDir(), "genfl.json")
		args := append(
			[]string{"experiment", "genfl", "--data-dir", dir, "--partition", c.partition, "--prior", c.prior,
				"--objective", c.objective, "--seeds", "2", "--seed-base", "3", "--json", path}, tinyGenFLFlags...)
		st, out, errs := runCLI(args...)
		require.Equal(t, exitOK, st, errs)
		assert.Contains(t, out, "expected 0–1 error")
		assert.Contains(t, out, "with probability ≥ 0.94")
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var rep map[string]any
		require.NoError(t, json.Unmarshal(raw, &rep))
		assert.Equal(t, "fmnist", rep["dataset"])
		assert.Equal(t, c.partition, rep["partition"])
		assert.Equal(t, c.prior, rep["prior"])
		assert.Equal(t, c.objective, rep["objective"])
		assert.Equal(t, c.setting, rep["setting"])
		for _, k := range []string{"bound", "test_error", "train_error"} {
			s, ok := rep[k].(map[string]any)
			require.True(t, ok, k)
			mean, _ := s["mean"].(float64)
			assert.True(t, mean > 0 && mean <= 1, "%s mean %v", k, s["mean"])
			_, hasCI := s["ci95"].(float64)
			assert.True(t, hasCI, "%s ci95 %v", k, s["ci95"])
		}
		seeds := rep["per_seed"].([]any)
		require.Len(t, seeds, 2)
		for _, s := range seeds {
			r := s.(map[string]any)
			// The bound is at least the Monte Carlo training error it inverts.
			assert.GreaterOrEqual(t, r["bound"].(float64), r["train_error"].(float64))
			assert.GreaterOrEqual(t, r["kl"].(float64), 0.0)
		}
	}
}

// --prior pacpfl prints GenFL's learnt prior and PAC-PFL's on the same
// users, each with its statement, and writes both to the JSON.
func TestExperimentGenFLPACPFLPrior(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	path := filepath.Join(t.TempDir(), "genfl.json")
	args := append([]string{"experiment", "genfl", "--data-dir", dir, "--partition", "labels5", "--split", "small",
		"--new-clients", "2", "--max-images", "1200", "--prior", "pacpfl", "--setting", "pfl", "--pacpfl-rounds", "3", "--seeds", "1", "--json",
		path}, tinyGenFLFlags...)
	st, out, errs := runCLI(args...)
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "learnt prior")
	assert.Contains(t, out, "The same users, PAC-PFL's prior:")
	assert.Contains(t, out, "a prior P drawn uniformly from PAC-PFL's particles")
	assert.Contains(t, out, "new users (2, none of their data in PAC-PFL's training")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep map[string]map[string]any
	require.NoError(t, json.Unmarshal(raw, &rep))
	assert.Equal(t, "learnt", rep["genfl"]["prior"])
	assert.Equal(t, 3.0, rep["pacpfl"]["pacpfl_particles"])
	nb := rep["pacpfl"]["new_users_bound"].(map[string]any)["mean"].(float64)
	assert.True(t, nb > 0 && nb <= 1, "new users' bound %v", nb)
	assert.Nil(t, rep["genfl"]["new_users_bound"])
	for _, k := range []string{"genfl", "pacpfl"} {
		b := rep[k]["bound"].(map[string]any)["mean"].(float64)
		e := rep[k]["train_error"].(map[string]any)["mean"].(float64)
		assert.True(t, b >= e && b <= 1, "%s: bound %v, train error %v", k, b, e)
	}
	for _, bad := range [][]string{
		{"--prior", "pacpfl", "--setting", "flsob"}, {"--prior", "pacpfl", "--setting", "pfl", "--hidden", "8,8"},
		{"--prior", "pacpfl", "--setting", "pfl", "--pacpfl-rounds", "0"},
	} {
		st, out, errs := runCLI(append([]string{"experiment", "genfl", "--data-dir", dir}, bad...)...)
		assert.Equal(t, exitUsage, st, "%v: %s", bad, errs)
		assert.Empty(t, out, "%v", bad)
	}
}

// The same seed gives the same report; -h lists the flags; bad values are
// usage errors before any data are read.
func TestExperimentGenFLFlags(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	args := append([]string{"experiment", "genfl", "--data-dir", dir, "--seeds", "1"}, tinyGenFLFlags...)
	st1, out1, errs := runCLI(args...)
	require.Equal(t, exitOK, st1, errs)
	_, out2, _ := runCLI(args...)
	strip := func(s string) string { // wall times differ
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "| 1 |") {
				f := strings.Split(l, "|")
				l = strings.Join(f[:len(f)-2], "|")
			}
			if !strings.Contains(l, "wall time") && !strings.Contains(l, "evaluations/s") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	assert.Equal(t, strip(out1), strip(out2))

	st, out, _ := runCLI("experiment", "genfl", "-h")
	assert.Equal(t, exitOK, st)
	assert.Contains(t, out, "-mc-samples")
	for _, bad := range [][]string{
		{"--partition", "labels5"}, {"--prior", "data"}, {"--objective", "f3"}, {"--estimator", "some"},
		{"--setting", "both"}, {"--sigma-prior", "0"}, {"--fraction", "1.5"},
		{"--delta", "0.5", "--delta-prime", "0.6"},
		{"--hidden", "0"}, {"--batch", "0"}, {"--seeds", "0"}, {"--momentum", "1"}, {"--p-min", "1"},
		{"--clients", "0"},
		{"--data-dir", filepath.Join(dir, "nope")},
	} {
		st, out, errs := runCLI(append([]string{"experiment", "genfl", "--data-dir", dir}, bad...)...)
		assert.Equal(t, exitUsage, st, "%v: %s", bad, errs)
		assert.Empty(t, out, "%v", bad)
		assert.NotEmpty(t, errs, "%v", bad)
	}
	// Too many users for the pool is a usage error naming the sizes.
	st, _, errs = runCLI("experiment", "genfl", "--data-dir", dir, "--clients", "1000", "--quiet")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "the pool")
}

// GenFL as a method of experiment fmnist: accepted by --methods, and on a
// small labels5 split of the fake images its personalised predictive
// gives accuracy and CE for the existing clients only.
func TestGenFLAsFMNISTMethod(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	im, err := data.FashionMNIST(dir)
	require.NoError(t, err)
	ds, err := data.Labels5(im, data.Labels5Config{Train: 12, Test: 6, New: 2, Seed: 1})
	require.NoError(t, err)
	var g genflFlags
	fs := newFlagSet("t", os.Stderr)
	addGenFLFlags(fs, &g)
	require.NoError(t, fs.Parse([]string{"--hidden", "8", "--prior-rounds", "10", "--prior-epochs", "2",
		"--personal-epochs", "3", "--lr", "0.05", "--test-draws", "3"}))
	o, err := g.options(1)
	require.NoError(t, err)
	r, err := methods.GenFL{Options: o}.Run(context.Background(), ds, 1, nil)
	require.NoError(t, err)
	require.NotNil(t, r.ExistingClass)
	assert.Nil(t, r.NewClass)
	assert.Len(t, r.ExistingClass.Accuracy, 10)
	assert.Greater(t, r.ExistingClass.MeanAccuracy, 30.0) // 5 labels per client: chance 20 %
	assert.Equal(t, "GenFL (PFL)", methods.Label("genfl"))

	st, _, errs := runCLI("experiment", "fmnist", "--methods", "genfl,bogus", "--data-dir", dir)
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "bogus")
	assert.NotContains(t, errs, `"genfl"`)
}
