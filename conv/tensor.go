package conv

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/linalg"
)

// Tensor is a dense float64 tensor in NCHW order: Data[((n*C+c)*H+h)*W+w].
// Vectors per sample (dense layers) use H = W = 1.
type Tensor struct {
	N, C, H, W int
	Data       []float64
}

// NewTensor allocates a zero tensor of the given shape.
func NewTensor(n, c, h, w int) *Tensor {
	return &Tensor{N: n, C: c, H: h, W: w, Data: make([]float64, n*c*h*w)}
}

// Shape returns [N C H W].
func (t *Tensor) Shape() [4]int { return [4]int{t.N, t.C, t.H, t.W} }

// Len is N·C·H·W.
func (t *Tensor) Len() int { return t.N * t.C * t.H * t.W }

// resize makes t an n×c×h×w tensor, reusing its storage when large enough.
func (t *Tensor) resize(n, c, h, w int) {
	t.N, t.C, t.H, t.W = n, c, h, w
	size := n * c * h * w
	if cap(t.Data) < size {
		t.Data = make([]float64, size)
	}
	t.Data = t.Data[:size]
}

// check validates a tensor argument: non-nil, positive dimensions and a data
// slice of exactly the size its shape claims.
func check(kind, name, what string, t *Tensor) error {
	if t == nil {
		return fmt.Errorf("%s %q: %s is nil", kind, name, what)
	}
	if t.N < 1 || t.C < 1 || t.H < 1 || t.W < 1 {
		return fmt.Errorf("%s %q: %s shape %v has a dimension < 1", kind, name, what, t.Shape())
	}
	if len(t.Data) != t.Len() {
		return fmt.Errorf("%s %q: %s shape %v needs %d values, data has %d", kind, name, what, t.Shape(), t.Len(),
			len(t.Data))
	}
	return nil
}

// shapeError names the layer and both shapes.
func shapeError(kind, name, what string, got [4]int, want string) error {
	return fmt.Errorf("%s %q: %s shape %v, want %s", kind, name, what, got, want)
}

// sameShape checks that dy has the shape of the layer's last output.
func sameShape(kind, name string, dy, out *Tensor) error {
	if err := check(kind, name, "output gradient", dy); err != nil {
		return err
	}
	if out == nil || out.Data == nil {
		return fmt.Errorf("%s %q: Backward called before Forward", kind, name)
	}
	if dy.Shape() != out.Shape() {
		return shapeError(kind, name, "output gradient", dy.Shape(), fmt.Sprint(out.Shape()))
	}
	return nil
}

// Options choose the BLAS and the parallelism of a layer. The zero value is
// the default: the project's default backend, GOMAXPROCS workers.
type Options struct {
	// BLAS performs the layer-level products (dense layers, and a
	// convolution whose batch is too small to split over workers), which
	// may use a multithreaded BLAS. nil means DefaultBLAS().
	BLAS blas.Float64
	// WorkerBLAS returns the BLAS for one worker goroutine of a
	// batch-parallel layer (convolution). It should be single-threaded: the
	// layer already keeps every core busy, and a multithreaded BLAS inside
	// each worker would oversubscribe them. nil means DefaultWorkerBLAS.
	WorkerBLAS func() blas.Float64
	// Workers caps the goroutines of a batch-parallel layer; 0 means
	// runtime.GOMAXPROCS(0) at construction. Each call also respects the
	// GOMAXPROCS current at the time.
	Workers int
}

// DefaultBLAS returns the default layer-level BLAS: the project's default
// backend (pacpfl's native BLAS, on all cores).
func DefaultBLAS() (blas.Float64, error) { return linalg.Backend(linalg.DefaultBackend) }

// DefaultWorkerBLAS returns the default per-worker BLAS: a single-threaded
// native BLAS.
func DefaultWorkerBLAS() blas.Float64 { return linalg.NewNative(1) }

// resolve fills the defaults in.
func (o Options) resolve() (Options, error) {
	if o.BLAS == nil {
		b, err := DefaultBLAS()
		if err != nil {
			return o, err
		}
		o.BLAS = b
	}
	if o.WorkerBLAS == nil {
		o.WorkerBLAS = DefaultWorkerBLAS
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o, nil
}
