package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	var tb Table
	run := func([]string, io.Writer, io.Writer) int { return ExitOK }
	tb.Add(Command{Name: "b", Summary: "second", Run: run})
	tb.Add(Command{Name: "a", Summary: "first", Run: run})
	if got := tb.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("names %v", got)
	}
	if c, ok := tb.Lookup("b"); !ok || c.Summary != "second" {
		t.Errorf("lookup b: %+v %v", c, ok)
	}
	if _, ok := tb.Lookup("c"); ok {
		t.Error("found c")
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name was added")
		}
	}()
	tb.Add(Command{Name: "a", Run: run})
}

func TestParse(t *testing.T) {
	var out, errs bytes.Buffer
	newFS := func() (*int, func([]string, bool) (int, bool)) {
		out.Reset()
		errs.Reset()
		fs := NewFlagSet("prog", "cmd", &Stderr{Writer: &errs, Stdout: &out})
		n := fs.Int("n", 3, "a number")
		return n, func(args []string, allow bool) (int, bool) { return Parse(fs, args, allow) }
	}
	n, parse := newFS()
	if st, ok := parse([]string{"--n", "5"}, false); !ok || st != ExitOK || *n != 5 {
		t.Errorf("good flags: status %d, ok %v, n %d", st, ok, *n)
	}
	_, parse = newFS()
	if st, ok := parse([]string{"-h"}, false); ok || st != ExitOK || errs.Len() != 0 ||
		!strings.HasPrefix(out.String(), "usage: prog cmd [flags]") {
		t.Errorf("-h: status %d, ok %v, stdout %q, stderr %q", st, ok, &out, &errs)
	}
	_, parse = newFS()
	if st, ok := parse([]string{"--m", "1"}, false); ok || st != ExitUsage || out.Len() != 0 {
		t.Errorf("bad flag: status %d, ok %v, stdout %q", st, ok, &out)
	}
	_, parse = newFS()
	if st, ok := parse([]string{"x"}, false); ok || st != ExitUsage {
		t.Errorf("positional: status %d, ok %v", st, ok)
	}
	_, parse = newFS()
	if _, ok := parse([]string{"x"}, true); !ok {
		t.Error("allowed positional refused")
	}
}

func TestGivenAndIsHelp(t *testing.T) {
	fs := NewFlagSet("prog", "cmd", io.Discard)
	fs.Int("n", 3, "")
	fs.Int("m", 3, "")
	if _, ok := Parse(fs, []string{"--n", "3"}, false); !ok {
		t.Fatal("parse")
	}
	if !Given(fs, "n") || Given(fs, "m") {
		t.Errorf("given n %v, m %v", Given(fs, "n"), Given(fs, "m"))
	}
	for arg, want := range map[string]bool{"-h": true, "--help": true, "-help": true, "help": true, "-n": false} {
		if IsHelp(arg) != want {
			t.Errorf("IsHelp(%q) = %v", arg, !want)
		}
	}
}

func TestSetDefault(t *testing.T) {
	fs := NewFlagSet("prog", "cmd", io.Discard)
	n := fs.Int("n", 3, "")
	SetDefault(fs, "n", "7")
	if *n != 7 || fs.Lookup("n").DefValue != "7" {
		t.Errorf("n = %d, DefValue %q; want 7", *n, fs.Lookup("n").DefValue)
	}
	defer func() {
		if recover() == nil {
			t.Error("a default the flag refuses did not panic")
		}
	}()
	SetDefault(fs, "n", "x")
}

type failing struct{ n int }

func (f *failing) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestCheckedWriterKeepsFirstError(t *testing.T) {
	f := &failing{}
	c := &CheckedWriter{W: f}
	if _, err := c.Write([]byte("a")); err == nil {
		t.Fatal("no error")
	}
	if _, err := c.Write([]byte("b")); err == nil || c.Err == nil || f.n != 1 {
		t.Errorf("second write: %v, kept %v, %d writes reached the writer", err, c.Err, f.n)
	}
}

func TestRunAndHelp(t *testing.T) {
	tb := Table{Head: "usage\n", Width: 4}
	var got []string
	tb.Add(Command{Name: "echo", Run: func(args []string, stdout, stderr io.Writer) int {
		got = args
		if len(args) > 0 && args[0] == "-h" {
			return ExitOK
		}
		_, err := stdout.Write([]byte("out"))
		if err != nil {
			return ExitOK // the lost output is Run's to report
		}
		return 7
	}})
	tb.Add(tb.Help("prog", "list"))
	var out bytes.Buffer
	for _, c := range []struct {
		args []string
		want int
	}{{nil, ExitUsage}, {[]string{"nope"}, ExitUsage}, {[]string{"echo", "a"}, 7}, {[]string{"-h"}, ExitOK},
		{[]string{"help", "echo"}, ExitOK}, {[]string{"help", "nope"}, ExitUsage}} {
		if st := tb.Run("prog", c.args, &out, io.Discard); st != c.want {
			t.Errorf("%v: status %d, want %d", c.args, st, c.want)
		}
	}
	if len(got) != 1 || got[0] != "-h" {
		t.Errorf("help echo ran echo with %v, want -h", got)
	}
	if st := tb.Run("prog", []string{"echo"}, &failing{}, io.Discard); st != ExitError {
		t.Errorf("lost stdout: status %d, want %d", st, ExitError)
	}
}
