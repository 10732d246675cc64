package conv

// Layer is one stage of a sequential network.
type Layer interface {
	// Forward returns the layer's output for x, owned by the layer and valid
	// until its next Forward. x must stay unchanged until Backward.
	Forward(x *Tensor) (*Tensor, error)
	// Backward takes the loss gradient with respect to the last output,
	// sets the parameter gradients and returns the gradient with respect to
	// the last input (nil for a layer told to skip it).
	Backward(dy *Tensor) (*Tensor, error)
	// Params lists the trainable parameters (none for activations).
	Params() []Param
}

// Param is one trainable array and its gradient. With Samples = S the
// array holds S weight samples one after another, each len(Value)/S long.
type Param struct {
	Name        string
	Value, Grad []float64
	Samples     int
}
