package option

import (
	"flag"
	"reflect"
)

// FlagNames maps the Go path of each field of the struct opts points to
// ("PosteriorFed.LR") that a flag of fs is bound to, the flag's Value
// pointing at the field as those of the flag package's XxxVar functions
// do, to that flag's name: the names a front end gives
// FieldError.Message, read off the flags themselves rather than kept in a
// second list. Of several flags bound to one field, the longest name wins
// (a short alias loses to its long form), then the first in fs's order.
func FlagNames(fs *flag.FlagSet, opts any) map[string]string {
	type leaf struct {
		addr uintptr
		kind reflect.Kind
	}
	paths := map[leaf]string{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if v.Kind() != reflect.Struct {
			paths[leaf{v.Addr().Pointer(), v.Kind()}] = path
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				name := f.Name
				if path != "" {
					name = path + "." + name
				}
				walk(v.Field(i), name)
			}
		}
	}
	walk(reflect.ValueOf(opts).Elem(), "")
	names := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		v := reflect.ValueOf(f.Value)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return
		}
		if p, ok := paths[leaf{v.Pointer(), v.Elem().Kind()}]; ok && len(f.Name) > len(names[p]) {
			names[p] = f.Name
		}
	})
	return names
}
