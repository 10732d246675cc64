package conv

import (
	"fmt"
	"math"
)

// SoftmaxCrossEntropy is the mean negative log-likelihood of integer labels
// under softmax(logits). With S samples the logits are N×(S·Classes), sample
// s in columns [s·Classes, (s+1)·Classes), and the loss is the mean over the
// N·S (image, sample) pairs — the Monte Carlo estimate of the expected loss.
type SoftmaxCrossEntropy struct {
	Name       string
	Classes, S int
	// LogProbs holds log softmax(logits), shaped like the logits.
	LogProbs Tensor
	// LogLik holds, per image and sample (N×S), the log-probability of the
	// image's label.
	LogLik []float64
	// Grad holds the gradient of the mean loss with respect to the logits.
	Grad Tensor
}

// NewSoftmaxCrossEntropy makes the loss layer (samples 0 means 1).
func NewSoftmaxCrossEntropy(name string, classes, samples int) (*SoftmaxCrossEntropy, error) {
	if samples == 0 {
		samples = 1
	}
	if classes < 1 || samples < 1 {
		return nil, fmt.Errorf("softmax-ce %q: classes %d, samples %d: both must be ≥ 1", name, classes, samples)
	}
	return &SoftmaxCrossEntropy{Name: name, Classes: classes, S: samples}, nil
}

// Forward computes the mean loss, LogProbs, LogLik and Grad. Log-sum-exp
// shifted by the row maximum keeps every exponent ≤ 0, so large logits
// neither overflow nor lose the loss.
func (l *SoftmaxCrossEntropy) Forward(logits *Tensor, labels []int) (float64, error) {
	if err := check("softmax-ce", l.Name, "logits", logits); err != nil {
		return 0, err
	}
	c, S := l.Classes, l.S
	if logits.C*logits.H*logits.W != S*c {
		return 0, shapeError("softmax-ce", l.Name, "logits", logits.Shape(), fmt.Sprintf("[%d %d 1 1]", logits.N, S*c))
	}
	n := logits.N
	if len(labels) != n {
		return 0, fmt.Errorf("softmax-ce %q: %d labels for a batch of %d", l.Name, len(labels), n)
	}
	for i, y := range labels {
		if y < 0 || y >= c {
			return 0, fmt.Errorf("softmax-ce %q: label %d of image %d outside [0, %d)", l.Name, y, i, c)
		}
	}
	l.LogProbs.resize(n, S*c, 1, 1)
	l.Grad.resize(n, S*c, 1, 1)
	if cap(l.LogLik) < n*S {
		l.LogLik = make([]float64, n*S)
	}
	l.LogLik = l.LogLik[:n*S]
	scale := 1 / float64(n*S)
	loss := 0.0
	for i := 0; i < n; i++ {
		for s := 0; s < S; s++ {
			off := (i*S + s) * c
			z := logits.Data[off : off+c]
			lp := l.LogProbs.Data[off : off+c]
			g := l.Grad.Data[off : off+c]
			mx := z[0]
			for _, v := range z[1:] {
				mx = math.Max(mx, v)
			}
			if math.IsNaN(mx) || math.IsInf(mx, 0) {
				return 0, fmt.Errorf("softmax-ce %q: logits of image %d (sample %d) are not finite (max %v)", l.Name, i,
					s, mx)
			}
			sum := 0.0
			for _, v := range z {
				sum += math.Exp(v - mx)
			}
			lse := mx + math.Log(sum)
			for k, v := range z {
				lp[k] = v - lse
				g[k] = math.Exp(lp[k]) * scale
			}
			g[labels[i]] -= scale
			ll := lp[labels[i]]
			l.LogLik[i*S+s] = ll
			loss -= ll
		}
	}
	return loss * scale, nil
}

// Backward returns Grad: the loss is the network's end, so there is no
// incoming gradient.
func (l *SoftmaxCrossEntropy) Backward() (*Tensor, error) {
	if l.Grad.Data == nil {
		return nil, fmt.Errorf("softmax-ce %q: Backward called before Forward", l.Name)
	}
	return &l.Grad, nil
}
