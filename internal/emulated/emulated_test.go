package emulated

import (
	"runtime"
	"testing"
)

const x86Info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nflags\t\t: fpu vme de pse avx2\n"
const armInfo = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\nCPU architecture: 8\n"

func TestEmulatedBy(t *testing.T) {
	for _, c := range []struct {
		goarch, info string
		want         bool
	}{
		{"arm64", x86Info, true},
		{"arm64", armInfo, false},
		{"amd64", x86Info, false},
		{"amd64", armInfo, true},
		{"arm64", "", false},
		{"riscv64", x86Info, false},
	} {
		if got := emulatedBy(c.goarch, []byte(c.info)); got != c.want {
			t.Errorf("emulatedBy(%s, %.20q…) = %v, want %v", c.goarch, c.info, got, c.want)
		}
	}
}

// On the amd64 CI machine the native run is never emulated; its arm64 run
// under qemu is.
func TestIsOnThisMachine(t *testing.T) {
	if runtime.GOARCH == "amd64" && Is() {
		t.Fatal("a native amd64 run reports itself emulated")
	}
	t.Logf("GOARCH %s, emulated %v", runtime.GOARCH, Is())
}
