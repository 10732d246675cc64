package methods

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
)

// The partitions deal the paper's users from the pool with the seed, and
// name the setting the paper runs on them.
func TestGenFLData(t *testing.T) {
	const n = 400
	im := &data.Images{Name: "tiny", Rows: 2, Cols: 2, Classes: 2, Pixels: make([]uint8, n*4), Labels: make([]uint8, n)}
	for i := range im.Labels {
		im.Labels[i] = uint8(i % 2)
	}
	d := DefaultGenFLData()
	assert.Equal(t, FLSOB, d.Setting())
	assert.Equal(t, 6000, d.PooledTestImages())
	d.Clients, d.Train, d.Test = 4, 9, 1
	ds, err := d.Data(im)(3)
	require.NoError(t, err)
	require.Len(t, ds.Existing, 4)
	assert.Equal(t, 9, ds.Existing[0].M())
	d.Partition, d.ShardSize = PartitionShards, 20
	assert.Equal(t, PFL, d.Setting())
	assert.Equal(t, 0, d.PooledTestImages())
	ds, err = d.Data(im)(3)
	require.NoError(t, err)
	assert.Len(t, ds.Existing, 4)
	assert.Equal(t, 4, d.Users(2))
	// labels5: experiment fmnist's split, one user per class.
	im10 := &data.Images{Name: "tiny10", Rows: 2, Cols: 2, Classes: 10, Pixels: make([]uint8, 50000*4),
		Labels: make([]uint8, 50000)}
	for i := range im10.Labels {
		im10.Labels[i] = uint8(i % 10)
	}
	d.Partition, d.Split = PartitionLabels5, "small"
	assert.Equal(t, PFL, d.Setting())
	assert.Equal(t, 0, d.PooledTestImages())
	assert.Equal(t, 10, d.Users(10))
	ds, err = d.Data(im10)(3)
	require.NoError(t, err)
	want, err := data.Labels5(im10, data.Labels5Config{Split: "small", Seed: 3, Pixels: data.PixelsUnit})
	require.NoError(t, err)
	assert.Equal(t, want.Existing, ds.Existing)
	d.Partition = "x"
	assert.Empty(t, d.Setting())
	_, err = d.Data(im)(3)
	assert.ErrorContains(t, err, `unknown GenFL partition "x"`)
}

// Validate names the field at fault with its value.
func TestGenFLDataValidate(t *testing.T) {
	require.NoError(t, DefaultGenFLData().Validate())
	for _, c := range []struct {
		set   func(*GenFLData)
		field string
		value any
	}{
		{func(d *GenFLData) { d.Partition = "dirichlet" }, "Partition", "dirichlet"},
		{func(d *GenFLData) { d.Clients = 0 }, "Clients", 0},
		{func(d *GenFLData) { d.Train = -1 }, "Train", -1},
		{func(d *GenFLData) { d.Test = 0 }, "Test", 0},
		{func(d *GenFLData) { d.Partition, d.ShardSize = PartitionShards, 0 }, "ShardSize", 0},
		{func(d *GenFLData) { d.Partition, d.Split = PartitionLabels5, "huge" }, "Split", "huge"},
		{func(d *GenFLData) { d.New = -1 }, "New", -1},
	} {
		d := DefaultGenFLData()
		c.set(&d)
		fields, values := fieldError(t, d.Validate())
		assert.Equal(t, []string{c.field}, fields)
		assert.Equal(t, []any{c.value}, values)
	}
}
