package fl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
)

func TestMemoryPlan(t *testing.T) {
	o := DefaultPACPFLOptions()
	o.Server.K = 10
	o.Bounds.PriorSamples, o.Bounds.FuncSamples = 5, 100
	p := o.MemoryPlan(1000)
	assert.Equal(t, 8*3*10*1000.0, p.Particles)
	assert.Equal(t, 800.0, p.Bounds)
	assert.Equal(t, "particles", p.Dominant())
	o.Bounds.PriorSamples = 1e9
	assert.Equal(t, "bounds", o.MemoryPlan(1000).Dominant())
	o.Server.K = 1 << 62 // counted in float64: no overflow
	assert.Greater(t, o.MemoryPlan(1<<40).Bytes(), 1e30)
}

func TestCheckBounds(t *testing.T) {
	c := data.DefaultPolynomial()
	c.Existing, c.New = 4, 0
	ds, err := data.Polynomial(c)
	require.NoError(t, err)
	o := DefaultPACPFLOptions()
	o.Server.ClientsPerRound = 2
	require.NoError(t, o.CheckBounds(ds))
	o.Bounds.A, o.Bounds.B = 1, 0
	assert.Error(t, o.CheckBounds(ds))
	o.Bounds.PriorSamples, o.Bounds.Learned = 0, nil
	assert.NoError(t, o.CheckBounds(ds), "no bound asked for")
}

func TestBNNCheckBounds(t *testing.T) {
	ds := &data.Dataset{Existing: make([]data.ClientData, 3)}
	for i := range ds.Existing {
		ds.Existing[i].Y = make([]float64, 5+i)
	}
	o := DefaultBNNOptions()
	require.NoError(t, o.CheckBounds(ds))
	o.Server.Tau = 1
	assert.Error(t, o.CheckBounds(ds), "the bounds need τ < 1")
	o.Server.Tau, o.Bounds.Delta = 0.5, 0
	assert.Error(t, o.CheckBounds(ds), "δ in (0, 1)")
	o.Bounds.PriorSamples = 0
	assert.NoError(t, o.CheckBounds(ds), "no bound asked for")
}
