package rpc

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines", `two\nlines`},
		{"cr\r\nlf", `cr\r\nlf`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00 del\x7f c1\u0085", `nul\x00 del\x7f c1\u0085`},
		{"sep\u2028par\u2029", `sep\u2028par\u2029`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash`, `back\\slash`},
		{"é ü 中", "é ü 中"},
	}
	for _, c := range cases {
		if got := Clean(c.in, 100); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Cut at max bytes, on a rune boundary, saying how much was cut.
	long := strings.Repeat("é", 1000) // 2000 bytes
	got := Clean(long, 11)
	if !strings.HasPrefix(got, strings.Repeat("é", 5)+"…(1990 more bytes)") || !utf8.ValidString(got) {
		t.Errorf("Clean(long) = %q", got)
	}
	// A megabyte of forged log lines becomes one bounded line.
	forged := strings.Repeat("\n2026/11/26 12:00:00 pacpfl server: client 0 joined", 20000)
	got = Clean(forged, MaxLoggedText)
	if strings.ContainsAny(got, "\n\r\x1b") || len(got) > 2*MaxLoggedText+40 {
		t.Errorf("Clean(forged) has %d bytes or a control character", len(got))
	}
}

type lineLog struct{ lines []string }

func (l *lineLog) logf(format string, a ...any) { l.lines = append(l.lines, fmt.Sprintf(format, a...)) }

// At most burst lines per interval; the rest are counted, by reason, in one
// line when the interval ends (even if nothing else happens).
func TestRateLog(t *testing.T) {
	var l lineLog
	r := newRateLog(l.logf, 50*time.Millisecond, 3)
	for i := range 500 {
		reason := "bad token"
		if i%5 == 0 {
			reason = "no registration"
		}
		r.add(reason, "refusal %d", i)
	}
	r.mu.Lock()
	n := len(l.lines)
	r.mu.Unlock()
	if n != 3 {
		t.Fatalf("%d lines during the burst: %q", n, l.lines)
	}
	time.Sleep(120 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(l.lines) != 4 {
		t.Fatalf("%d lines, want 3 and a summary: %q", len(l.lines), l.lines)
	}
	// 497 not logged: i = 3..499; i%5 == 0 among them: 5, 10, …, 495 (99).
	if want := "497 more refusals not logged in the last 50ms (bad token 398, no registration 99)"; l.lines[3] != want {
		t.Errorf("summary %q, want %q", l.lines[3], want)
	}
}
