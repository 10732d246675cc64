package data

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/option"
)

// Validate names the field at fault, so a command can name its flag.
func TestLargeValidateFieldError(t *testing.T) {
	for _, tc := range []struct {
		mod    func(*LargeConfig)
		fields []string
		msg    string
	}{
		{func(c *LargeConfig) { c.Kind = "x" }, []string{"Kind"}, `unknown K "x" (want smooth or pv)`},
		{func(c *LargeConfig) { c.Clients = 0 }, []string{"Clients"}, "K 0 must be at least 1"},
		{func(c *LargeConfig) { c.NewClients = MaxLargeClients }, []string{"Clients", "NewClients"},
			"K 10 and L 100000: at most 100000 clients in all"},
		{func(c *LargeConfig) { c.Noise = -1 }, []string{"Noise"}, "K -1 must be finite and ≥ 0"},
		{func(c *LargeConfig) { c.Kind, c.Variant = LargePV, "n" }, []string{"Variant"},
			`unknown K "n" (want s or ew)`},
		{func(c *LargeConfig) { c.Kind, c.Year = LargePV, 1800 }, []string{"Year"},
			"K 1800 must lie in 1900…2099 (the solar algorithm's range)"},
	} {
		c := DefaultLarge(LargeSmooth)
		tc.mod(&c)
		var fe *option.FieldError
		if err := c.Validate(); !errors.As(err, &fe) {
			t.Fatalf("%+v: error %v, want an *option.FieldError", c, err)
		}
		if !slices.Equal(fe.Fields, tc.fields) {
			t.Errorf("fields %q, want %q", fe.Fields, tc.fields)
		}
		if got := fe.Message("K", "L"); got != tc.msg {
			t.Errorf("Message = %q, want %q", got, tc.msg)
		}
	}
	for _, kind := range []string{LargeSmooth, LargePV} {
		if err := DefaultLarge(kind).Validate(); err != nil {
			t.Errorf("%s defaults: %v", kind, err)
		}
	}
}

// WriteCSV counts the bytes it writes, the size WriteSummary prints.
func TestLargeWriteCSVCountsBytes(t *testing.T) {
	c := DefaultLarge(LargeSmooth)
	c.Clients, c.Samples = 2, 10
	g, err := NewLarge(c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := g.WriteCSV(context.Background(), &b, nil); err != nil {
		t.Fatal(err)
	}
	if g.written != int64(b.Len()) || b.Len() == 0 {
		t.Errorf("written %d, want the %d bytes of the CSV", g.written, b.Len())
	}
}

// The fields foreign to a kind are fields of LargeConfig that its Validate
// ignores: zeroed, the configuration stays valid. Each kind's are the
// other's own.
func TestLargeForeignFields(t *testing.T) {
	foreign := map[string][]string{}
	for _, kind := range []string{LargeSmooth, LargePV} {
		c := DefaultLarge(kind)
		foreign[kind] = c.ForeignFields()
		v := reflect.ValueOf(&c).Elem()
		for _, name := range foreign[kind] {
			f := v.FieldByName(name)
			if !f.IsValid() {
				t.Fatalf("%s: no field %s", kind, name)
			}
			f.SetZero()
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s with its foreign fields zeroed: %v", kind, err)
		}
	}
	for _, name := range foreign[LargeSmooth] {
		if slices.Contains(foreign[LargePV], name) {
			t.Errorf("%s is foreign to both kinds", name)
		}
	}
	if got := (LargeConfig{Kind: "x"}).ForeignFields(); got != nil {
		t.Errorf("unknown kind: %q", got)
	}
}
