package lml

// mlp locates one network inside φ: layer l maps ins[l] inputs to widths[l]
// outputs with W_l at φ[offs[l]:] (widths[l]×ins[l], row-major) followed by
// b_l. Every layer but the last applies tanh.
type mlp struct {
	ins, widths, offs []int
	end               int // one past the network's last parameter in φ
}

func newMLP(in int, hidden []int, out, offset int) mlp {
	var n mlp
	widths := append(append([]int(nil), hidden...), out)
	for _, w := range widths {
		n.ins = append(n.ins, in)
		n.widths = append(n.widths, w)
		n.offs = append(n.offs, offset)
		offset += w*in + w
		in = w
	}
	n.end = offset
	return n
}

func (n *mlp) layers() int { return len(n.widths) }
func (n *mlp) out() int    { return n.widths[len(n.widths)-1] }

func (n *mlp) maxWidth() int {
	w := n.ins[0]
	for _, v := range n.widths {
		w = max(w, v)
	}
	return w
}
