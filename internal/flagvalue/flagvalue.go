// Package flagvalue holds flag.Value types for comma-separated lists, as
// pacpfl's subcommands take them ("--n 500,1000", "--backends native,gonum").
package flagvalue

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Ints is a flag.Value for comma-separated positive integers ("500,1000");
// Set replaces the list (a default is not appended to).
type Ints []int

// String is the list joined with commas.
func (l *Ints) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// Set parses v, refusing an entry that is not a positive integer.
func (l *Ints) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// Floats is a flag.Value for comma-separated positive finite numbers
// ("0.05,0.1"); Set replaces the list.
type Floats []float64

// String is the list joined with commas, each number in its shortest form.
func (l *Floats) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// Set parses v, refusing an entry that is not a positive finite number.
func (l *Floats) Set(v string) error {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("%q is not a positive finite number", f)
		}
		out = append(out, x)
	}
	*l = out
	return nil
}

// Strings is a flag.Value for comma-separated names ("native,gonum"), blanks
// trimmed and empty entries dropped; Set replaces the list.
type Strings []string

// String is the list joined with commas.
func (l *Strings) String() string { return strings.Join(*l, ",") }

// Set parses v, refusing a list without a name.
func (l *Strings) Set(v string) error {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("empty list")
	}
	*l = out
	return nil
}
