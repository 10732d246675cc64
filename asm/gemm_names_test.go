package asm

import "testing"

func TestGemmKernelNames(t *testing.T) {
	for _, l := range append(ArchLevels(), Generic) {
		ks := GemmKernels(l)
		if len(ks) == 0 || ks[0] != GemmKernelFor(l) {
			t.Fatalf("%v: GemmKernels does not start with GemmKernelFor", l)
		}
		seen := map[string]bool{}
		for _, k := range ks {
			n := k.Name()
			if seen[n] {
				t.Errorf("%v: two kernels named %s", l, n)
			}
			seen[n] = true
			if got, ok := GemmKernelNamed(l, n); !ok || got != k {
				t.Errorf("%v: GemmKernelNamed(%s) = %v, %v", l, n, got, ok)
			}
		}
		if _, ok := GemmKernelNamed(l, "avx9-1x1"); ok {
			t.Errorf("%v: an unknown name was found", l)
		}
	}
	if n := GemmKernelFor(Generic).Name(); n != "generic-4x4" {
		t.Errorf("generic kernel is %q", n)
	}
}
