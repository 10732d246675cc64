//go:build linux

package hugepage

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/pacpfl/pacpfl/internal/emulated"
)

// vmFlags returns the VmFlags of the mapping of this process that holds
// address a, from /proc/self/smaps.
func vmFlags(t *testing.T, a uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") &&
			!strings.HasSuffix(fields[0], ":") {
			r := strings.SplitN(fields[0], "-", 2)
			lo, err1 := strconv.ParseUint(r[0], 16, 64)
			hi, err2 := strconv.ParseUint(r[1], 16, 64)
			inside = err1 == nil && err2 == nil && uint64(a) >= lo && uint64(a) < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping holds %#x", a)
	return nil
}

func has(flags []string, f string) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}

// The whole huge pages of a buffer from Floats are advised (VmFlags "hg")
// and the memory around them is not.
func TestFloatsAdvisesItsHugePages(t *testing.T) {
	if emulated.Is() {
		t.Skip("a user-mode emulator's /proc/self/smaps describes the emulator's memory")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	s := Floats(3*MinFloats + 123)
	b := pages(s)
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	for _, a := range []uintptr{lo, lo + Size, hi - 1} {
		if fl := vmFlags(t, a); !has(fl, "hg") {
			t.Errorf("address %#x inside the advised pages has VmFlags %v, no hg", a, fl)
		}
	}
	start := uintptr(unsafe.Pointer(&s[0]))
	if start < lo {
		if fl := vmFlags(t, lo-1); has(fl, "hg") {
			t.Errorf("address %#x, in the buffer's head before its first whole huge page, was advised (%v)",
				lo-1, fl)
		}
	}
	// Below MinFloats nothing is advised.
	small := Floats(MinFloats / 4)
	if fl := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); has(fl, "hg") {
		t.Errorf("a buffer of %d floats was advised (%v)", len(small), fl)
	}
	runtime.KeepAlive(s) // small must not reuse s's advised memory
}
