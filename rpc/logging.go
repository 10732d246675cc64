package rpc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxLoggedText is the longest text from the other side (a client's error
// message, a server's Done reason, a model kind) that is logged or passed
// on; longer texts are cut and say how much was cut.
const MaxLoggedText = 256

// Clean makes text received from the network safe to log: at most max
// bytes of it are kept (cut at a rune boundary, the number of bytes cut
// appended), and every control character, invalid UTF-8 byte and line or
// paragraph separator is escaped as Go would quote it (\n, \x1b, \u2028),
// so that the text can neither start a new log line nor drive a terminal.
func Clean(s string, max int) string {
	cut := 0
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut, s = len(s)-n, s[:n]
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
			b.WriteRune(r)
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	if cut > 0 {
		fmt.Fprintf(&b, "…(%d more bytes)", cut)
	}
	return b.String()
}

// rateLog logs events of a kind that strangers can cause at will
// (refused connections and registrations): at most burst lines per
// interval; the rest are counted and summed up in one line per interval,
// by reason.
type rateLog struct {
	logf     func(format string, a ...any)
	interval time.Duration
	burst    int

	mu         sync.Mutex
	start      time.Time
	logged     int
	suppressed map[string]int
	flush      *time.Timer
}

func newRateLog(logf func(string, ...any), interval time.Duration, burst int) *rateLog {
	return &rateLog{logf: logf, interval: interval, burst: burst, suppressed: map[string]int{}}
}

// add logs one event of the given reason, or counts it.
func (r *rateLog) add(reason, format string, a ...any) {
	if r == nil || r.logf == nil {
		return
	}
	r.mu.Lock()
	now := time.Now()
	if now.Sub(r.start) >= r.interval {
		r.summaryLocked()
		r.start, r.logged = now, 0
	}
	if r.logged < r.burst {
		r.logged++
		r.mu.Unlock()
		r.logf(format, a...)
		return
	}
	r.suppressed[reason]++
	if r.flush == nil {
		r.flush = time.AfterFunc(r.start.Add(r.interval).Sub(now), func() {
			r.mu.Lock()
			r.summaryLocked()
			r.mu.Unlock()
		})
	}
	r.mu.Unlock()
}

// summaryLocked writes the line for the events counted and not logged.
func (r *rateLog) summaryLocked() {
	if r.flush != nil {
		r.flush.Stop()
		r.flush = nil
	}
	if len(r.suppressed) == 0 {
		return
	}
	total := 0
	reasons := make([]string, 0, len(r.suppressed))
	for k, n := range r.suppressed {
		total += n
		reasons = append(reasons, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(reasons)
	clear(r.suppressed)
	r.logf("%d more refusals not logged in the last %v (%s)", total, r.interval, strings.Join(reasons, ", "))
}
