package rpc

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// ModelGP is the model kind of fl.GPModel clients.
const ModelGP = "gp"

// GPClient returns the configuration of client id, a GP client (the
// default networks for d inputs, as pacpfl train) on its own training data
// c: the remote side runs exactly fl.GPModel's client update.
func GPClient(id int, c *data.ClientData, d int) ClientConfig {
	g := fl.NewGPModel(d)
	return ClientConfig{ID: id, ModelKind: ModelGP, Dim: g.Dim(), DataSize: c.M(),
		New: func(beta string) (fl.Client, error) {
			t, err := fl.ParseTemperature(beta)
			if err != nil {
				return nil, fmt.Errorf("temperature from the server: %w", err)
			}
			g.Beta = t
			return g.NewClient(c)
		}}
}
