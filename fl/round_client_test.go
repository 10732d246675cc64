package fl

import "testing"

// AppendRoundEval replaces a last evaluation of the same round and appends
// any other.
func TestAppendRoundEval(t *testing.T) {
	h := AppendRoundEval(nil, RoundEval{Round: 4, GM: 1})
	h = AppendRoundEval(h, RoundEval{Round: 5, GM: 2})
	h = AppendRoundEval(h, RoundEval{Round: 5, GM: 3})
	if len(h) != 2 || h[0].Round != 4 || h[1].Round != 5 || h[1].GM != 3 {
		t.Fatalf("history %+v", h)
	}
}
