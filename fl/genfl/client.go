package genfl

import (
	"fmt"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
)

// Client is one user's sample S_k: rows of In features and class labels.
type Client struct {
	X []float64 // M()×In, row-major
	Y []int
}

// M is the number of examples m_k.
func (c *Client) M() int { return len(c.Y) }

// NewClient checks and converts a data set's rows (labels as float64 class
// indices, as package data stores them).
func NewClient(x, y []float64, in, classes int) (Client, error) {
	if in < 1 || len(x) != len(y)*in {
		return Client{}, fmt.Errorf("genfl: %d inputs for %d examples of %d features", len(x), len(y), in)
	}
	c := Client{X: x, Y: make([]int, len(y))}
	for i, v := range y {
		if v != math.Trunc(v) || v < 0 || v >= float64(classes) {
			return Client{}, fmt.Errorf("genfl: label %v of example %d is not a class 0..%d", v, i, classes-1)
		}
		c.Y[i] = int(v)
	}
	return c, nil
}

// Rows returns the client restricted to the rows [lo, hi) (sharing memory).
func (c *Client) Rows(lo, hi int) Client {
	in := len(c.X) / max(len(c.Y), 1)
	return Client{X: c.X[lo*in : hi*in : hi*in], Y: c.Y[lo:hi:hi]}
}

// Split halves a client: the first ⌊m/2⌋ rows (S¹_k, the prior's share)
// and the rest (S²_k, posterior and bound). The rows of a data set's client
// are already in random order.
func (c *Client) Split() (first, second Client) {
	h := c.M() / 2
	return c.Rows(0, h), c.Rows(h, c.M())
}

// TrainClients converts the training rows of a data set's existing clients.
func TrainClients(ds *data.Dataset) ([]Client, error) {
	return convert(ds, func(c *data.ClientData) ([]float64, []float64) { return c.X, c.Y })
}

// TestClients converts the test rows of a data set's existing clients.
func TestClients(ds *data.Dataset) ([]Client, error) {
	return convert(ds, func(c *data.ClientData) ([]float64, []float64) { return c.XTest, c.YTest })
}

func convert(ds *data.Dataset, rows func(*data.ClientData) ([]float64, []float64)) ([]Client, error) {
	if ds.Classes < 2 {
		return nil, fmt.Errorf("genfl: %s is not a classification data set", ds.Name)
	}
	out := make([]Client, len(ds.Existing))
	for k := range ds.Existing {
		x, y := rows(&ds.Existing[k])
		c, err := NewClient(x, y, ds.D, ds.Classes)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// TotalM is m = Σ_k m_k.
func TotalM(cs []Client) int {
	m := 0
	for i := range cs {
		m += cs[i].M()
	}
	return m
}

func checkClients(cs []Client, a Arch) error {
	if len(cs) == 0 {
		return fmt.Errorf("genfl: no users")
	}
	for k := range cs {
		c := &cs[k]
		if c.M() == 0 {
			return fmt.Errorf("genfl: user %d has no examples", k)
		}
		if len(c.X) != c.M()*a.In {
			return fmt.Errorf("genfl: user %d has %d inputs for %d examples of %d features", k, len(c.X), c.M(), a.In)
		}
		for i, y := range c.Y {
			if y < 0 || y >= a.Classes {
				return fmt.Errorf("genfl: user %d example %d has label %d, want 0..%d", k, i, y, a.Classes-1)
			}
		}
	}
	return nil
}

// nowSeconds is the wall clock in seconds (for the reported timings only).
func nowSeconds() float64 { return float64(time.Now().UnixNano()) / 1e9 }
