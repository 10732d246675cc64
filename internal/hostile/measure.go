package hostile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MemStatus is a process's memory as /proc/PID/status reports it.
type MemStatus struct {
	RSS int64 // VmRSS: resident set size now, bytes
	HWM int64 // VmHWM: peak resident set size so far, bytes
}

// ReadMemStatus reads VmRSS and VmHWM of process pid (Linux).
func ReadMemStatus(pid int) (MemStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return MemStatus{}, err
	}
	var m MemStatus
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			return MemStatus{}, fmt.Errorf("/proc/%d/status: unexpected %s line %q", pid, k, sc.Text())
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return MemStatus{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, k, err)
		}
		if k == "VmRSS" {
			m.RSS = n << 10
		} else {
			m.HWM = n << 10
		}
		seen++
	}
	if seen != 2 {
		// A zombie has no Vm lines.
		return MemStatus{}, fmt.Errorf("/proc/%d/status: no VmRSS/VmHWM (process exited?)", pid)
	}
	return m, nil
}

// RSSReport sums up a sampler's readings.
type RSSReport struct {
	Samples int
	PeakRSS int64         // largest VmRSS sampled, bytes
	PeakAt  time.Duration // when, from the start of sampling
	HWM     int64         // the last VmHWM read: the kernel's own peak, between samples too
	LastRSS int64
	MeanRSS int64
	Err     error // the last read error (the process exited), if any
}

// String is a one-line summary in MB.
func (r RSSReport) String() string {
	return fmt.Sprintf("peak RSS %.1f MB at %v (VmHWM %.1f MB, mean %.1f MB, last %.1f MB, %d samples)",
		float64(r.PeakRSS)/1e6, r.PeakAt.Round(time.Millisecond), float64(r.HWM)/1e6, float64(r.MeanRSS)/1e6,
		float64(r.LastRSS)/1e6, r.Samples)
}

// RSSSampler reads a process's memory at an interval.
type RSSSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	rep RSSReport
	sum float64
}

// SampleRSS starts sampling process pid's VmRSS and VmHWM every interval
// (the first sample at once) until Stop or the process is gone.
func SampleRSS(pid int, interval time.Duration) *RSSSampler {
	s := &RSSSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop(interval)
	return s
}

func (s *RSSSampler) loop(interval time.Duration) {
	defer close(s.done)
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		m, err := ReadMemStatus(s.pid)
		s.mu.Lock()
		if err != nil {
			s.rep.Err = err
		} else {
			s.rep.Samples++
			s.rep.LastRSS, s.rep.HWM = m.RSS, m.HWM
			if m.RSS > s.rep.PeakRSS {
				s.rep.PeakRSS, s.rep.PeakAt = m.RSS, time.Since(start)
			}
			s.sum += float64(m.RSS)
			s.rep.MeanRSS = int64(s.sum / float64(s.rep.Samples))
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Report is the summary so far.
func (s *RSSSampler) Report() RSSReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rep
}

// Stop ends the sampling and returns the summary.
func (s *RSSSampler) Stop() RSSReport {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.Report()
}

// LogStats describes a captured log.
type LogStats struct {
	Lines       int // lines (a last line without a newline counts)
	Bytes       int
	LongestLine int // bytes
	// Unprefixed counts the lines that do not start with the log's prefix
	// (continuations of a message that carried newlines).
	Unprefixed int
	// ControlLines counts the lines with a control character other than
	// tab (ESC, CR, BEL, …, and DEL); Escapes the ESC bytes in all.
	ControlLines int
	Escapes      int
	// Forged counts the lines that start with the prefix (and so look
	// like the server's own) yet contain the marker.
	Forged int
}

// AnalyzeLog counts the lines of a captured log whose own lines start
// with prefix (e.g. "pacpfl server: ": "" skips Unprefixed and Forged),
// and the forged-looking lines carrying marker ("": Forged not counted).
func AnalyzeLog(log []byte, prefix, marker string) LogStats {
	s := LogStats{Bytes: len(log)}
	for len(log) > 0 {
		line := log
		if i := bytes.IndexByte(log, '\n'); i >= 0 {
			line, log = log[:i], log[i+1:]
		} else {
			log = nil
		}
		s.Lines++
		s.LongestLine = max(s.LongestLine, len(line))
		if prefix != "" {
			if !bytes.HasPrefix(line, []byte(prefix)) {
				s.Unprefixed++
			} else if marker != "" && bytes.Contains(line, []byte(marker)) {
				s.Forged++
			}
		}
		if HasControl(line) {
			s.ControlLines++
		}
		s.Escapes += bytes.Count(line, []byte{0x1b})
	}
	return s
}

// HasControl reports whether b holds a control character other than tab:
// a C0 control byte (newlines included), DEL, or a C1 control in UTF-8
// (U+0080–U+009F, e.g. U+009B, a one-character CSI to some terminals).
func HasControl(b []byte) bool {
	for i, c := range b {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return true
		}
		if c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

// ForgedMessage is a log-forging error message of exactly size bytes:
// repeated lines that start with a newline, prefix and a timestamp in the
// log package's format, claim a client joined, carry marker, and are
// followed by ANSI escape sequences (erase line, cursor up, carriage
// return, colour) that would hide or rewrite lines on a terminal.
func ForgedMessage(size int, prefix, marker string, now time.Time) string {
	var b strings.Builder
	b.Grow(size + 256)
	for b.Len() < size {
		fmt.Fprintf(&b, "\n%s%s client 0 joined from 127.0.0.1:40000 (1 of 1) %s\x1b[2K\x1b[1A\r\x1b[31mALERT\x1b[0m\a",
			prefix, now.Format("2006/01/02 15:04:05.000000"), marker)
	}
	return b.String()[:size] // ASCII: any cut is valid UTF-8
}
