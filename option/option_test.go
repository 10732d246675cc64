package option

import (
	"errors"
	"fmt"
	"testing"
)

func TestFieldErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err        *FieldError
		error, msg string
	}{
		{Range("", "Server.K", 0, "must be at least 1"), "Server.K 0 must be at least 1", "--k 0 must be at least 1"},
		{Joint("genfl", []string{"Momentum", "PriorMomentum"}, []any{1.0, 0.5}, "must lie in [0, 1)"),
			"genfl: Momentum 1 and PriorMomentum 0.5 must lie in [0, 1)",
			"--k 1 and --l 0.5 must lie in [0, 1)"},
		{Joint("", []string{"Arch.Hidden"}, nil, "needs at least one width"),
			"Arch.Hidden needs at least one width", "--k needs at least one width"},
		{Custom("large data", []string{"Kind"}, []any{"x"}, func(n []string) string {
			return fmt.Sprintf("unknown %s %q", n[0], "x")
		}), `large data: unknown Kind "x"`, `unknown --k "x"`},
	} {
		if got := tc.err.Error(); got != tc.error {
			t.Errorf("Error() = %q, want %q", got, tc.error)
		}
		if got := tc.err.Message("--k", "--l"); got != tc.msg {
			t.Errorf("Message = %q, want %q", got, tc.msg)
		}
		var fe *FieldError
		if !errors.As(fmt.Errorf("wrapped: %w", tc.err), &fe) || fe != tc.err {
			t.Errorf("errors.As does not find %v", tc.err)
		}
	}
	// A name missing for a field: its Go path.
	e := Joint("", []string{"A", "B"}, []any{1, 2}, "clash")
	if got := e.Message("--a"); got != "--a 1 and B 2 clash" {
		t.Errorf("one name for two fields: %q", got)
	}
}

func TestKebab(t *testing.T) {
	for field, want := range map[string]string{"NewClients": "new-clients", "Kind": "kind", "Year": "year",
		"MinElevation": "min-elevation", "TestFraction": "test-fraction", "x": "x"} {
		if got := Kebab(field); got != want {
			t.Errorf("Kebab(%q) = %q, want %q", field, got, want)
		}
	}
}

// Format puts the names before the other arguments.
func TestFormat(t *testing.T) {
	e := Format("rpc", []string{"Listen", "Wait"}, "%s and %s %q: %v", "x", errors.New("cause"))
	if got := e.Error(); got != `rpc: Listen and Wait "x": cause` {
		t.Errorf("Error() = %q", got)
	}
	if got := e.Message("--listen", "--wait"); got != `--listen and --wait "x": cause` {
		t.Errorf("Message = %q", got)
	}
	if len(e.Fields) != 2 || e.Fields[1] != "Wait" || e.Values != nil {
		t.Errorf("fields %v, values %v", e.Fields, e.Values)
	}
}
