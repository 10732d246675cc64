package flagvalue

import (
	"reflect"
	"testing"
)

func TestWidths(t *testing.T) {
	for in, want := range map[string]Widths{"32, 16": {32, 16}, "none": {}, " ": {}} {
		w := Widths{7}
		if err := w.Set(in); err != nil || !reflect.DeepEqual(w, want) {
			t.Errorf("Set(%q) = %v, %v; want %v", in, w, err, want)
		}
	}
	w := Widths{7}
	if err := w.Set("3,0"); err == nil || !reflect.DeepEqual(w, Widths{7}) {
		t.Errorf("Set(3,0): %v, %v", w, err)
	}
	if s := (&Widths{}).String(); s != "none" {
		t.Errorf("no layer: %q", s)
	}
	if s := (&Widths{4, 2}).String(); s != "4,2" {
		t.Errorf("4,2: %q", s)
	}
}
