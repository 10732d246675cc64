package svgd

import (
	"fmt"
	"math"
)

// SVGD computes Stein variational directions for a fixed number of particles
// k of fixed dimension d. It owns the k×k buffers of one step and is reused
// across steps; it is not safe for concurrent use.
type SVGD struct {
	k, d int

	// FixedBandwidth, if positive, replaces the median heuristic.
	FixedBandwidth float64

	sqdist  []float64 // k×k ‖φ_l − φ_κ‖²
	kern    []float64 // k×k k_SVGD(φ_l, φ_κ)
	scratch []float64 // k×k, for the median
	h       float64   // bandwidth of the last step
	dir     []float64 // k×d, the direction used by Step
}

// New returns an SVGD workspace for k particles of dimension d.
func New(k, d int) (*SVGD, error) {
	if k < 1 || d < 1 {
		return nil, fmt.Errorf("svgd: need k ≥ 1 particles of dimension d ≥ 1, got k=%d d=%d", k, d)
	}
	return &SVGD{
		k: k, d: d,
		sqdist:  make([]float64, k*k),
		kern:    make([]float64, k*k),
		scratch: make([]float64, k*k),
		dir:     make([]float64, k*d),
	}, nil
}

// K returns the number of particles.
func (s *SVGD) K() int { return s.k }

// Dim returns the particle dimension.
func (s *SVGD) Dim() int { return s.d }

// Bandwidth returns the bandwidth h used by the last Direction or Step.
func (s *SVGD) Bandwidth() float64 { return s.h }

// Kernel returns the k×k kernel matrix of the last Direction or Step (a view
// into the workspace, overwritten by the next call).
func (s *SVGD) Kernel() []float64 { return s.kern }

// Kernel computes the RBF kernel matrix of the particles phi (k×d) into the
// workspace and returns the bandwidth: h from the median heuristic (see
// Bandwidth) unless FixedBandwidth is set.
func (s *SVGD) kernel(phi []float64) float64 {
	squaredDistances(s.sqdist, phi, s.k, s.d)
	h := s.FixedBandwidth
	if h <= 0 {
		h = Bandwidth(s.sqdist, s.k, s.scratch)
	}
	rbf(s.kern, s.sqdist, h)
	s.h = h
	return h
}

// Direction writes the SVGD direction (eq. 39 without the step size) for
// particles phi and their scores (both k×d) into dst (k×d):
//
//	ΔΦ = (1/k) (K S + (2/h) (diag(K1) Φ − K Φ)),
//
// with K the RBF kernel matrix exp(−‖φ_l − φ_κ‖²/h). Row κ is
// (1/k) Σ_l K_lκ (s_l + (2/h)(φ_κ − φ_l)): the first term pulls particles up
// the score, the second pushes them apart. dst must not alias phi or scores.
func (s *SVGD) Direction(dst, phi, scores []float64) error {
	if err := s.check(dst, phi, scores); err != nil {
		return err
	}
	s.direction(dst, phi, scores)
	return nil
}

func (s *SVGD) check(dst, phi, scores []float64) error {
	if err := checkMatrix("particles", phi, s.k, s.d); err != nil {
		return err
	}
	if err := checkMatrix("scores", scores, s.k, s.d); err != nil {
		return err
	}
	if len(dst) != s.k*s.d {
		return fmt.Errorf("svgd: direction buffer has %d values, want %d", len(dst), s.k*s.d)
	}
	return nil
}

func (s *SVGD) direction(dst, phi, scores []float64) {
	k, d := s.k, s.d
	h := s.kernel(phi)
	c := 2 / h
	invK := 1 / float64(k)
	for r := 0; r < k; r++ {
		out := dst[r*d : r*d+d]
		for i := range out {
			out[i] = 0
		}
		krow := s.kern[r*k : r*k+k]
		// Σ_l K_rl s_l − (2/h) Σ_l K_rl φ_l, then + (2/h)(Σ_l K_rl) φ_r.
		// The self term l = r is kept apart and written as (φ_r − φ_r) = 0
		// implicitly: it contributes K_rr s_r only, so with k = 1 the
		// direction is exactly the score.
		var rowSum float64
		for l := 0; l < k; l++ {
			if l == r {
				axpy(krow[l], scores[l*d:l*d+d], out)
				continue
			}
			w := krow[l]
			rowSum += w
			sl := scores[l*d : l*d+d]
			pl := phi[l*d : l*d+d]
			cw := c * w
			for i := range out {
				out[i] += w*sl[i] - cw*pl[i]
			}
		}
		if rowSum != 0 {
			axpy(c*rowSum, phi[r*d:r*d+d], out)
		}
		if invK != 1 {
			for i := range out {
				out[i] *= invK
			}
		}
	}
}

// Step moves the particles phi (k×d) in place along the SVGD direction
// computed from scores, through the optimiser opt (Ascent: φ ← φ + ηΔΦ).
// The particles and scores must be finite, and so must the direction: a
// direction with a non-finite value (the kernel terms overflowed) is an
// error returned before opt is called, so neither the particles nor the
// optimiser's state change (Adam also refuses a value whose square
// overflows).
func (s *SVGD) Step(phi, scores []float64, opt Optimizer) error {
	if err := s.check(s.dir, phi, scores); err != nil {
		return err
	}
	if opt == nil {
		return fmt.Errorf("svgd: Step needs an optimiser")
	}
	s.direction(s.dir, phi, scores)
	for i, v := range s.dir {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("svgd: direction[%d,%d] = %v is not finite (finite particles and scores, bandwidth "+
				"%.4g); nothing changed", i/s.d, i%s.d, v, s.h)
		}
	}
	return opt.Ascend(phi, s.dir)
}

func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}
