package conv_test

import (
	"fmt"

	"github.com/pacpfl/pacpfl/conv"
)

// A forward and backward pass through conv → ReLU → dense → softmax
// cross-entropy on one 4×4 image; Backward leaves the parameter gradients
// in each layer's Params.
func Example() {
	c, _ := conv.NewConv2D(
		conv.Conv2DConfig{Name: "conv", InChannels: 1, InH: 4, InW: 4, OutChannels: 2, KernelH: 3, KernelW: 3})
	for i := range c.Weight {
		c.Weight[i] = 0.1 * float64(i%5-2)
	}
	relu := conv.NewReLU("relu")
	flat := conv.NewFlatten("flatten")
	dense, _ := conv.NewDense(conv.DenseConfig{Name: "dense", In: 2 * 2 * 2, Out: 3})
	for i := range dense.Weight {
		dense.Weight[i] = 0.05 * float64(i%7-3)
	}
	loss, _ := conv.NewSoftmaxCrossEntropy("loss", 3, 1)
	net := conv.NewNet(loss, c, relu, flat, dense)

	x := conv.NewTensor(1, 1, 4, 4)
	for i := range x.Data {
		x.Data[i] = float64(i) / 16
	}
	l, err := net.Forward(x, []int{2})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := net.Backward(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss %.4f\n", l)
	fmt.Printf("∂loss/∂bias of the dense layer: [%.4f %.4f %.4f]\n", dense.GradBias[0], dense.GradBias[1],
		dense.GradBias[2])

	// The gradient of the first convolution weight against a central
	// finite difference of the loss.
	g := c.GradWeight[0]
	const h = 1e-6
	c.Weight[0] += h
	lp, _ := net.Forward(x, []int{2})
	c.Weight[0] -= 2 * h
	lm, _ := net.Forward(x, []int{2})
	fmt.Printf("∂loss/∂w₀ = %.6f, finite difference %.6f\n", g, (lp-lm)/(2*h))
	// Output:
	// loss 1.0974
	// ∂loss/∂bias of the dense layer: [0.3329 0.3333 -0.6662]
	// ∂loss/∂w₀ = -0.003122, finite difference -0.003122
}
