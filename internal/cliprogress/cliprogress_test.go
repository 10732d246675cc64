package cliprogress

import (
	"strings"
	"testing"
	"time"
)

// Off a terminal, the first and the last step are logged (the first
// only once LogEvery has passed), with the value unless hidden.
func TestBarLogLines(t *testing.T) {
	var w strings.Builder
	b := New(&w, "train", 4, false)
	b.Update(1, 1.5)
	if w.Len() != 0 {
		t.Fatalf("logged before LogEvery: %q", w.String())
	}
	b.Update(4, 2.25)
	if got := w.String(); !strings.HasPrefix(got, "train: round 4/4, mean client LML 2.250, elapsed ") {
		t.Fatalf("last step: %q", got)
	}
	w.Reset()
	b.Unit, b.HideValue = "row", true
	b.Update(4, 0)
	if got := w.String(); !strings.HasPrefix(got, "train: row 4/4, elapsed ") {
		t.Fatalf("hidden value: %q", got)
	}
	b.Done()
	q := New(&w, "x", 1, true)
	w.Reset()
	q.Update(1, 0)
	if w.Len() != 0 {
		t.Fatalf("quiet bar wrote %q", w.String())
	}
}

// With a Delay, nothing is written before it has passed, not even the
// last step; after it, the bar writes as without one.
func TestBarDelay(t *testing.T) {
	var w strings.Builder
	b := New(&w, "gen", 2, false)
	b.Delay = time.Hour
	b.Update(2, 0)
	if w.Len() != 0 {
		t.Fatalf("written within the delay: %q", w.String())
	}
	b.start = b.start.Add(-2 * time.Hour)
	b.Update(2, 0)
	if !strings.HasPrefix(w.String(), "gen: round 2/2") {
		t.Fatalf("after the delay: %q", w.String())
	}
}
