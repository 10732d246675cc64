package sysmem

import (
	"errors"
	"testing"
)

func TestMemAvailable(t *testing.T) {
	info := []byte("MemTotal:       32000000 kB\nMemFree:  1000 kB\nMemAvailable:   2048 kB\nBuffers: 1 kB\n")
	if got := memAvailable(info); got != 2048*1024 {
		t.Errorf("MemAvailable: %v bytes, want %v", got, 2048*1024)
	}
	for _, bad := range []string{"", "MemAvailable:\n", "MemAvailable: lots kB\n", "MemFree: 10 kB\n"} {
		if got := memAvailable([]byte(bad)); got != 0 {
			t.Errorf("%q: %v, want 0 (unknown)", bad, got)
		}
	}
	if Available() < 0 {
		t.Error("negative available memory")
	}
}

func TestCheck(t *testing.T) {
	if err := Check("--n 10", 1<<30, 2<<30); err != nil {
		t.Errorf("fits: %v", err)
	}
	if err := Check("--n 10", 1<<40, 0); err != nil {
		t.Errorf("unknown memory refuses nothing: %v", err)
	}
	err := Check("--n 10", 3<<30, 2<<30)
	var tl *TooLargeError
	if !errors.As(err, &tl) || *tl != (TooLargeError{What: "--n 10", Need: 3 << 30, Available: 2 << 30}) {
		t.Errorf("too large: %#v", err)
	}
}
