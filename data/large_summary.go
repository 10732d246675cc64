package data

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// MemoryBytes is a lower bound on the memory of generating c: the weather
// and one house's series for pv (about 460 bytes a row, measured at 5
// minutes), nothing that grows with the size for smooth, whose rows are
// streamed.
func (c LargeConfig) MemoryBytes() float64 {
	if c.Kind == LargePV {
		return 500 * float64(c.Samples)
	}
	return 0
}

// WriteSummary prints what the data set written to out (a file name, or
// "-" for standard output) by the last WriteCSV holds: its clients, rows
// and size in bytes, the time the writing took, its columns, and the
// pacpfl train command line that reads it with its split and new clients.
func (g *Large) WriteSummary(w io.Writer, out string, elapsed time.Duration) error {
	c := g.cfg
	clients := "clients"
	if c.Clients+c.NewClients == 1 {
		clients = "client"
	}
	file := out
	if file == "-" {
		file = "FILE.csv"
	}
	train := fmt.Sprintf("pacpfl train --data %s --client-column %s --target-column %s --split-column %s",
		file, LargeClientColumn, g.Target(), LargeSplitColumn)
	if c.NewClients > 0 {
		train += " --new-clients " + strings.Join(g.NewClientIDs(), ",")
	}
	_, err := fmt.Fprintf(w, "wrote %s: %d %s (%d existing, %d new) × %d rows (%d test rows each), %s, in %s\n"+
		"columns: %s\nread it with: %s\n",
		out, c.Clients+c.NewClients, clients, c.Clients, c.NewClients, c.Samples, c.TestRows(),
		DecimalBytes(g.written), elapsed.Round(time.Millisecond), strings.Join(g.Header(), ","), train)
	return err
}

// DecimalBytes is n in bytes, kB, MB or GB (powers of 1000, as ls -h --si
// and df -H print them), 3 significant digits.
func DecimalBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d bytes", n)
	}
	v := float64(n) / 1000
	for _, u := range []string{"kB", "MB"} {
		if v < 1000 {
			return fmt.Sprintf("%.3g %s", v, u)
		}
		v /= 1000
	}
	return fmt.Sprintf("%.3g GB", v)
}

// countingWriter passes writes to w and counts the bytes written.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
