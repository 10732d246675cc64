// Package conv holds the layers of the Bayesian CNN: 2-D convolution, max
// pooling, dense layers, ReLU and tanh activations and softmax cross-entropy,
// forward and backward, in float64 with NCHW tensors (batch first).
//
// Every layer owns its output and gradient buffers: Forward returns a tensor
// that stays valid until the layer's next Forward, and the buffers are sized
// once (and regrown only if the batch grows), so a training loop does not
// allocate in steady state.
//
// Bayesian layers evaluate S weight samples at once. A layer built with
// Samples = S holds S weight sets one after another; its output has S·C
// channels, sample s in channels [s·C, (s+1)·C). An input with the layer's
// own channel count is shared by all samples (the first layer of a network:
// one im2col, one GEMM with S·C_out stacked filters); an input with S times as
// many channels carries one slice per sample (every later layer). Pooling and
// activations act per channel and need no special handling.
//
// Convolutions are im2col + GEMM per group of images, parallel over the
// batch with a single-threaded BLAS per worker. There is no direct loop
// kernel for a first layer with C_in = 1: it is slower than im2col + GEMM
// (docs/performance.md §3).
//
// A layer is not safe for concurrent use; distinct layers are. Results do
// not depend on timing: the batch is split statically, so for a given
// GOMAXPROCS every run sums in the same order.
//
// Main types: Tensor (NCHW data), the layers Conv2D, MaxPool2D, Dense,
// Flatten, ReLU, Tanh and Dropout (inverted, with a reproducible mask
// stream and an evaluation mode) behind the Layer interface, SoftmaxCrossEntropy,
// and Net, a sequential network (NewMLP and NewBCNN build the paper's
// networks, Bayes their Bayesian versions with stacked weight samples).
//
// Errors: configurations that cannot work (sizes below 1, a kernel larger
// than the padded image, a window or stride below 1) are refused by
// the constructors; an input whose shape does not match the layer, a label
// outside 0..Classes−1, or Backward before Forward is an error from the call,
// never a panic or an out-of-range write.
package conv
