// Package bench measures pacpfl's kernels the way the project reports them:
// every figure is the minimum over several repetitions after a warm-up, and
// implementations that are compared run alternately inside one process, so
// that the drift of a noisy machine hits them alike.
//
// Alternate runs Contenders side by side and returns each one's best time;
// MachinePeak reports the machine's double-precision peak (cores × measured
// clock × FLOP per cycle, the FMA throughput measured where it can be) so
// that GFLOP/s can be stated as a fraction of it, and says how each factor
// was obtained; JSONLine writes one result per line. A bad PACPFL_CPU_GHZ is
// an error (ConfigError), never a silently assumed clock. The functions are
// meant for one measuring goroutine; a Contender may itself run parallel
// code.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Contender is one implementation in a side-by-side measurement. Run performs
// the measured work once; Setup, if set, runs before each repetition and is
// not timed.
type Contender struct {
	Name  string
	Setup func()
	Run   func() error
}

// Alternate warms every contender up once, then runs reps rounds in which each
// contender runs once, in turn, and returns each one's minimum wall time in
// seconds. A contender whose Run fails is reported by err and skipped after.
func Alternate(reps int, cs []Contender) (best []float64, errs []error) {
	if reps < 1 {
		reps = 1
	}
	best = make([]float64, len(cs))
	errs = make([]error, len(cs))
	for i := range cs {
		best[i] = -1
		if cs[i].Setup != nil {
			cs[i].Setup()
		}
		errs[i] = cs[i].Run() // warm-up
	}
	for r := 0; r < reps; r++ {
		for i, c := range cs {
			if errs[i] != nil {
				continue
			}
			if c.Setup != nil {
				c.Setup()
			}
			start := time.Now()
			err := c.Run()
			s := time.Since(start).Seconds()
			if err != nil {
				errs[i] = err
				continue
			}
			if best[i] < 0 || s < best[i] {
				best[i] = s
			}
		}
	}
	return best, errs
}

// JSONLine writes v as one JSON object on its own line.
func JSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
