package option

import "fmt"

// Format is fields whose message is fmt.Sprintf(format, names..., a...):
// the first len(fields) verbs of format take the fields' names, in order,
// and the verbs after them take a. It suits messages that name a field
// anywhere but at the start or that wrap a cause ("%s: %v"). Values is
// empty: the message's arguments are not the fields' values.
func Format(scope string, fields []string, format string, a ...any) *FieldError {
	return Custom(scope, fields, nil, func(names []string) string {
		args := make([]any, 0, len(names)+len(a))
		for _, n := range names {
			args = append(args, n)
		}
		return fmt.Sprintf(format, append(args, a...)...)
	})
}
