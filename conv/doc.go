// Package conv holds the layers of the Bayesian CNN: 2-D convolution, pooling,
// dense layers, activations and softmax cross-entropy, forward and backward.
package conv
