// Package sysmem checks a size against this machine's available memory
// before anything is allocated. Go cannot recover from a failed allocation
// (the process dies with "fatal error: out of memory" and a stack dump), or
// the kernel's OOM killer ends it, so an absurd size must be refused first.
package sysmem

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Available is this machine's MemAvailable in bytes (/proc/meminfo), 0 when
// unknown.
func Available() float64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return memAvailable(data)
}

// memAvailable is the MemAvailable line of a /proc/meminfo in bytes, 0 if
// there is none.
func memAvailable(meminfo []byte) float64 {
	for _, line := range bytes.Split(meminfo, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			if kb, err := strconv.ParseFloat(string(f[1]), 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// TooLargeError is a size that needs more memory than is available.
type TooLargeError struct {
	What      string  // names the size, e.g. "--n 4000"
	Need      float64 // a lower bound of the bytes held at once
	Available float64 // bytes
}

// Error names the size and both amounts in GiB.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s needs at least %.3g GiB, but only %.3g GiB of memory is available",
		e.What, e.Need/(1<<30), e.Available/(1<<30))
}

// Check returns a *TooLargeError when need bytes exceed avail, nil when
// they fit or avail is unknown (≤ 0).
func Check(what string, need, avail float64) error {
	if avail <= 0 || need <= avail {
		return nil
	}
	return &TooLargeError{What: what, Need: need, Available: avail}
}
