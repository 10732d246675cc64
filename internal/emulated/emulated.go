// Package emulated tells a test whether its binary runs under a user-mode
// emulator such as qemu-aarch64-static, where it runs 5–20× slower than on
// the CPU it was built for.
//
// Tests of architecture-independent logic (end-to-end CLI runs, memory
// accounting) use it to skip their long cases there: they run natively on
// amd64 in the same CI, and on a real arm64 machine they run in full.
// Numerical tests, whose kernels differ per architecture, must not skip.
package emulated

import (
	"bytes"
	"os"
	"runtime"
	"sync"
)

var once = sync.OnceValue(detect)

// Is reports whether the process runs under a user-mode emulator: the
// CPU /proc/cpuinfo describes is not of runtime.GOARCH's family. Under
// qemu-user, /proc/cpuinfo is the host's.
func Is() bool { return once() }

func detect() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	return emulatedBy(runtime.GOARCH, b)
}

// emulatedBy reports whether cpuinfo describes a CPU of another family than
// goarch. Only the families CI emulates are told apart; anything else
// counts as native.
func emulatedBy(goarch string, cpuinfo []byte) bool {
	x86 := bytes.Contains(cpuinfo, []byte("vendor_id")) && bytes.Contains(cpuinfo, []byte("flags"))
	arm := bytes.Contains(cpuinfo, []byte("CPU implementer"))
	switch goarch {
	case "amd64", "386":
		return arm
	case "arm64", "arm":
		return x86
	}
	return false
}
