package flagvalue

import "strings"

// Widths is a flag.Value for the hidden-layer widths of a network: Ints
// ("32,32"), or "none" (or "") for a network without hidden layers.
type Widths []int

// String is the widths joined with commas, "none" for no layer.
func (l *Widths) String() string {
	if len(*l) == 0 {
		return "none"
	}
	return (*Ints)(l).String()
}

// Set parses v as Ints does, "none" and "" as no layer.
func (l *Widths) Set(v string) error {
	if s := strings.TrimSpace(v); s == "" || s == "none" {
		*l = Widths{}
		return nil
	}
	return (*Ints)(l).Set(v)
}
