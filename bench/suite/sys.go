package suite

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// resetPeakRSS returns the memory the Go heap no longer uses to the system
// and resets this process's peak resident set size (VmHWM) to its current
// one (Linux: "5" to /proc/self/clear_refs). It reports whether the reset
// worked.
func resetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// procStatusBytes returns a "kB" field of /proc/self/status (VmRSS,
// VmHWM) in bytes, 0 if /proc does not report it.
func procStatusBytes(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &n); err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// processCPUSeconds is the process's user and system CPU time so far, 0
// where getrusage fails.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cpuModel is the CPU's model name (/proc/cpuinfo, else GOARCH) and the
// number of logical CPUs.
func cpuModel() string {
	name := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "model name"); ok {
				if _, v, ok := strings.Cut(rest, ":"); ok && strings.TrimSpace(v) != "" {
					name = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", name, runtime.NumCPU())
}

// formatRSS prints a peak RSS in GB (10⁹ bytes): "-" if unknown, with a
// "*" when it is the process's peak so far rather than the row's.
func formatRSS(b int64, row bool) string {
	if b <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.3f GB", float64(b)/1e9)
	if !row {
		s += "*"
	}
	return s
}

// formatMB prints bytes in MB (10⁶ bytes): "-" if unknown, with a "*"
// when not measured for the row alone (the process's peak so far).
func formatMB(b int64, row bool) string {
	if b <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.1f MB", float64(b)/1e6)
	if !row {
		s += "*"
	}
	return s
}
