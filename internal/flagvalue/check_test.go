package flagvalue

import (
	"flag"
	"math"
	"runtime"
	"testing"
)

func TestCheckNames(t *testing.T) {
	known := []string{"a", "b"}
	for _, c := range []struct {
		names []string
		ok    bool
	}{{nil, true}, {[]string{"b", "a"}, true}, {[]string{"c"}, false}, {[]string{"a", "a"}, false}} {
		if err := CheckNames("--x", c.names, known); (err == nil) != c.ok {
			t.Errorf("%v: %v", c.names, err)
		}
	}
}

func TestCheckThreadsAndSeeds(t *testing.T) {
	for n, ok := range map[int]bool{0: true, 1: true, runtime.NumCPU(): true, -1: false, runtime.NumCPU() + 1: false} {
		if err := CheckThreads("--threads", n); (err == nil) != ok {
			t.Errorf("threads %d: %v", n, err)
		}
	}
	for _, c := range []struct {
		seeds int
		base  uint64
		ok    bool
	}{{1, 0, true}, {0, 0, false}, {2, math.MaxUint64 - 1, true}, {2, math.MaxUint64, false}} {
		if err := CheckSeeds(c.seeds, c.base); (err == nil) != c.ok {
			t.Errorf("seeds %d from %d: %v", c.seeds, c.base, err)
		}
	}
}

func TestCheckPositive(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("a", 1, "")
	fs.Int("b", 0, "")
	if err := CheckPositive(fs, "a"); err != nil {
		t.Error(err)
	}
	if err := CheckPositive(fs, "a", "b"); err == nil {
		t.Error("b = 0 passed")
	}
}
