package templates

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/hwtest/hwtest/spec"
)

// specPath is the package whose types Literal renders; runtime re-exports each of
// them under the same name, and generated code names them there.
var specPath = reflect.TypeFor[spec.Model]().PkgPath()

// Literal renders a value of package spec (what spec.ModelOf or spec.TargetOf
// returned) as the Go expression that evaluates to it: struct fields in
// declaration order, one a line at the top and inline below it, zero fields left
// out, map keys sorted. It reads the value, not the catalog, so the literal in a
// generated suite is by construction what the converter gave (a test compiles one
// and compares).
func Literal(v any) (jen.Code, error) {
	return literal(reflect.ValueOf(v), true, true)
}

// literal renders v; typed is false where Go lets a composite literal's type be
// left out (slice elements, map values), multi asks for one field a line.
func literal(v reflect.Value, typed, multi bool) (*jen.Statement, error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() {
			return jen.Nil(), nil // not an empty one: Dims [] is a scalar, nil is no override
		}
	}
	switch v.Kind() {
	case reflect.Bool:
		return jen.Lit(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return jen.Lit(int(v.Int())), nil // untyped: the field or element type types it
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v has no Go literal", f)
		}
		return jen.Lit(f), nil
	case reflect.String:
		return jen.Lit(v.String()), nil
	case reflect.Pointer:
		elem, err := literal(v.Elem(), typed, multi)
		if err != nil || !typed {
			return elem, err // &T{...} as an element is written {...}
		}
		return jen.Op("&").Add(elem), nil
	case reflect.Slice:
		var items []jen.Code
		for i := range v.Len() {
			item, err := literal(v.Index(i), false, false)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return typeOf(v.Type()).Values(items...), nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: only string keys are rendered", v.Type())
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		dict := jen.Dict{}
		for _, k := range keys {
			item, err := literal(v.MapIndex(k), false, false)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k.String(), err)
			}
			dict[jen.Lit(k.String())] = item
		}
		return typeOf(v.Type()).Values(dict), nil
	case reflect.Struct:
		var fields []jen.Code
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || v.Field(i).IsZero() {
				continue
			}
			value, err := literal(v.Field(i), true, false)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			fields = append(fields, jen.Id(f.Name).Op(":").Add(value))
		}
		body := jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: multi && len(fields) > 0}, fields...)
		if !typed {
			return jen.Add(body), nil
		}
		return typeOf(v.Type()).Add(body), nil
	}
	return nil, fmt.Errorf("%s: no literal for a %s", v.Type(), v.Kind())
}

// typeOf spells a type as generated code does: spec's named types through runtime.
func typeOf(t reflect.Type) *jen.Statement {
	switch {
	case t.Name() != "" && t.PkgPath() == specPath:
		return jen.Qual(RuntimePath, t.Name())
	case t.Name() != "" && t.PkgPath() == "":
		return jen.Id(t.Name()) // int64, string, ...
	case t.Kind() == reflect.Slice:
		return jen.Index().Add(typeOf(t.Elem()))
	case t.Kind() == reflect.Map:
		return jen.Map(typeOf(t.Key())).Add(typeOf(t.Elem()))
	case t.Kind() == reflect.Pointer:
		return jen.Op("*").Add(typeOf(t.Elem()))
	}
	// A named type of another package: render it by name so the compile test of the
	// literal fails loudly rather than this guessing an import.
	return jen.Id(t.String())
}
