package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Marshal is json.Marshal (json.MarshalIndent with two spaces with indent)
// with every NaN and ±Inf float written as null, at any depth: a bound of a
// library struct, a per-client slice in a map. encoding/json refuses them,
// and a finished run of hours must not be lost to the encoder because one
// figure is undefined (a group without clients, a vacuous bound). Results
// whose non-finite value is an error (gp eval's LML) are to be checked
// before they get here.
func Marshal(v any, indent bool) ([]byte, error) {
	t, err := finiteTree(reflect.ValueOf(v))
	if err != nil {
		return nil, err
	}
	if indent {
		return json.MarshalIndent(t, "", "  ")
	}
	return json.Marshal(t)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// finiteTree is v as encoding/json would see it (field names and omitempty
// from the json tags, embedded structs flattened, json.Marshaler
// implementations asked), with NaN and ±Inf replaced by nil.
func finiteTree(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return nil, nil
	}
	if m, ok := asMarshaler(v); ok {
		b, err := m.MarshalJSON()
		return json.RawMessage(b), err
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		return v.Interface(), nil
	case reflect.Pointer, reflect.Interface:
		return finiteTree(v.Elem())
	case reflect.Struct:
		obj := &orderedObject{}
		return obj, obj.addFields(v)
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Key().Kind() != reflect.String && !isInt(v.Type().Key().Kind()) {
			return v.Interface(), nil // encoding/json's own rules (TextMarshaler keys)
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			key := ""
			switch {
			case k.Kind() == reflect.String:
				key = k.String()
			case k.CanInt():
				key = strconv.FormatInt(k.Int(), 10)
			default:
				key = strconv.FormatUint(k.Uint(), 10)
			}
			e, err := finiteTree(it.Value())
			if err != nil {
				return nil, err
			}
			out[key] = e
		}
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface(), nil // base64, as encoding/json writes []byte
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			e, err := finiteTree(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return v.Interface(), nil
}

func isInt(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uintptr
}

// asMarshaler returns v's json.Marshaler, as encoding/json would use it
// (pointer receivers only on addressable values).
func asMarshaler(v reflect.Value) (json.Marshaler, bool) {
	if v.Type().Implements(marshalerType) && v.CanInterface() {
		return v.Interface().(json.Marshaler), true
	}
	if v.CanAddr() && reflect.PointerTo(v.Type()).Implements(marshalerType) {
		return v.Addr().Interface().(json.Marshaler), true
	}
	return nil, false
}

// orderedObject is a JSON object whose keys keep the struct's field order.
type orderedObject struct {
	keys []string
	vals []any
}

func (o *orderedObject) addFields(v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				if err := o.addFields(fv); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if hasOpt(opts, "omitempty") && isEmptyValue(fv) {
			continue
		}
		val, err := finiteTree(fv) // (no report uses the ",string" option)
		if err != nil {
			return err
		}
		o.keys = append(o.keys, name)
		o.vals = append(o.vals, val)
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
