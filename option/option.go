// Package option holds the error of an options value out of range, shared
// by the packages whose options a front end binds to names of its own
// (command-line flags, configuration keys): the library states each rule
// once, naming the Go fields at fault, and the front end renders the same
// text with its names for them.
package option

import (
	"fmt"
	"strings"
	"unicode"
)

// FieldError is a field of an options value, or fields checked together,
// outside their range.
type FieldError struct {
	// Scope names what the options configure ("genfl", "large data"); it
	// prefixes Error. Empty for none.
	Scope string
	// Fields are the Go paths of the fields at fault in the options value
	// ("Server.K", "PosteriorFed.LR"), Values their values in that order
	// (none where the text says it all).
	Fields []string
	Values []any
	text   func(names []string) string
}

// Error is the message with the fields called by their Go paths.
func (e *FieldError) Error() string {
	if e.Scope == "" {
		return e.Message(e.Fields...)
	}
	return e.Scope + ": " + e.Message(e.Fields...)
}

// Message is the message with Fields[i] called names[i]; a missing name
// is the field's Go path.
func (e *FieldError) Message(names ...string) string {
	n := make([]string, len(e.Fields))
	for i := range n {
		n[i] = e.Fields[i]
		if i < len(names) {
			n[i] = names[i]
		}
	}
	return e.text(n)
}

// Range is one field against its rule: "NAME VALUE RULE", as in
// "Server.K 0 must be at least 1".
func Range(scope, field string, value any, rule string) *FieldError {
	return Joint(scope, []string{field}, []any{value}, rule)
}

// Joint is fields checked together: "N1 V1 and N2 V2 RULE", as in
// "Momentum 1 and PriorMomentum 0.9 must lie in [0, 1)". With fewer
// values than fields, the fields without one are named alone.
func Joint(scope string, fields []string, values []any, rule string) *FieldError {
	return Custom(scope, fields, values, func(names []string) string {
		parts := make([]string, len(names))
		for i, name := range names {
			parts[i] = name
			if i < len(values) {
				parts[i] += " " + fmt.Sprint(values[i])
			}
		}
		return strings.Join(parts, " and ") + " " + rule
	})
}

// Custom is fields whose message text writes with the names it is given
// (one per field, in the order of fields), for rules that do not read as
// "NAME VALUE RULE".
func Custom(scope string, fields []string, values []any, text func(names []string) string) *FieldError {
	return &FieldError{Scope: scope, Fields: fields, Values: values, text: text}
}

// Kebab is a Go field name in kebab case, the name a front end gives the
// field by default: NewClients → new-clients, MinElevation → min-elevation.
func Kebab(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
