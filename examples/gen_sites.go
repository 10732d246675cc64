//go:build ignore

// gen_sites writes examples/sites.csv, the small federated data set of the
// README's "Your own data" section: the electric load of 10 buildings
// (sites) against the outdoor temperature, 30 hourly readings each. Every
// building has its own base load, heating and cooling slopes and balance
// temperature, so the sites share a shape but not its parameters. The
// column split marks a quarter of each site's rows as test rows.
//
//	go run examples/gen_sites.go > examples/sites.csv
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
)

func main() {
	rng := rand.New(rand.NewPCG(2026, 17))
	fmt.Println("site,temperature,humidity,load,split")
	for s := 1; s <= 10; s++ {
		base := 40 + 15*rng.Float64()                      // kW
		heat := 1.5 + 1.0*rng.Float64()                    // kW per °C below the balance point
		cool := 1.0 + 1.5*rng.Float64()                    // kW per °C above it
		balance := 15 + 4*rng.Float64()                    // °C
		lo, hi := -5+10*rng.Float64(), 22+10*rng.Float64() // the site's climate
		for i := 0; i < 30; i++ {
			t := lo + (hi-lo)*rng.Float64()
			h := 30 + 60*rng.Float64() // relative humidity, %
			d := t - balance
			// Smooth hinge: heating below the balance point, cooling above.
			load := base + heat*softplus(-d) + cool*softplus(d) + 0.05*(h-60)*math.Max(d, 0)/5 + 1.5*rng.NormFloat64()
			split := "train"
			if i%4 == 3 {
				split = "test"
			}
			fmt.Printf("site%02d,%.1f,%.0f,%.2f,%s\n", s, t, h, load, split)
		}
	}
}

func softplus(x float64) float64 { return math.Log1p(math.Exp(x)) }
