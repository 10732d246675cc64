// Package cliprogress reports the progress of a long command on a stream
// (standard error): a bar redrawn in place on a terminal, otherwise one
// log line every LogEvery, each with the elapsed time and an estimate of
// the time left; nothing when quiet.
package cliprogress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/runlog"
)

// LogEvery is the interval of the log lines when the stream is not a
// terminal.
const LogEvery = 5 * time.Second

// Bar is the progress of one task of Total steps.
type Bar struct {
	// Unit is what a step is ("round", "row", "client").
	Unit string
	// HideValue leaves the value of each update out (a differentially
	// private run's client LMLs, which its guarantee does not cover).
	HideValue bool
	// Delay > 0 shows nothing until that much time has passed since New,
	// not even the last step: a task done in a moment shows no progress.
	Delay time.Duration

	w          io.Writer
	label      string
	total      int
	tty, quiet bool
	start      time.Time
	last       time.Time
	drawn      bool
	shown      bool // Delay has passed
}

// New is the progress of label's total steps, counted in rounds, on w.
func New(w io.Writer, label string, total int, quiet bool) *Bar {
	b := &Bar{w: w, label: label, total: total, quiet: quiet, start: time.Now(), Unit: "round"}
	b.last = b.start
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

// Update reports done of the steps and the mean client LML lml of the
// last: drawn at most every 100 ms on a terminal, every LogEvery
// otherwise, and always for the last step.
func (b *Bar) Update(done int, lml float64) {
	if b.quiet {
		return
	}
	now := time.Now()
	if !b.shown && b.Delay > 0 && now.Sub(b.start) <= b.Delay {
		return
	}
	b.shown = true
	interval := LogEvery
	if b.tty {
		interval = 100 * time.Millisecond
	}
	if now.Sub(b.last) < interval && done != b.total {
		return
	}
	b.last = now
	el := now.Sub(b.start)
	eta := time.Duration(0)
	if done > 0 {
		eta = time.Duration(float64(el) * float64(b.total-done) / float64(done))
	}
	if b.tty {
		const width = 30
		filled := width * done / max(1, b.total)
		bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
		fmt.Fprintf(b.w, "\r%s [%s] %s %d/%d%s  elapsed %s  ETA %s ", b.label, bar, b.Unit, done, b.total,
			b.value("  LML %8.3f", lml), el.Round(time.Second), eta.Round(time.Second))
		b.drawn = true
	} else {
		fmt.Fprintf(b.w, "%s: %s %d/%d%s, elapsed %s, ETA %s\n", b.label, b.Unit, done, b.total,
			b.value(", mean client LML %.3f", lml), el.Round(time.Second), eta.Round(time.Second))
	}
}

func (b *Bar) value(format string, lml float64) string {
	if b.HideValue {
		return ""
	}
	return fmt.Sprintf(format, lml)
}

// Done ends a bar drawn on a terminal with a newline.
func (b *Bar) Done() {
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

// Maker makes the bars of an experiment's observer (package runlog) on w:
// one Bar per run, counted in unit (default "round"), its values hidden
// when hideValue.
func Maker(w io.Writer, quiet bool) runlog.BarMaker {
	return func(label string, total int, unit string, hideValue bool) runlog.Bar {
		b := New(w, label, total, quiet)
		b.HideValue = hideValue
		if unit != "" {
			b.Unit = unit
		}
		return b
	}
}
