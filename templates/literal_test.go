package templates_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/spec"
	"github.com/hwtest/hwtest/templates"
)

// filler sets every exported field of a catalog value, recursively, to a value no
// other field has; with change set, the change-th value it sets is a different one.
// So a field added to a catalog type is filled without this test knowing its name.
type filler struct {
	n, change int
	paths     []string // paths[i] names the (i+1)-th value set
}

// mapKey is the key of every map it fills: hardware.yaml's expect is keyed by
// family; any key serves.
const mapKey = "audio"

func (f *filler) next(path string) (int, bool) {
	f.n++
	f.paths = append(f.paths, path)
	return f.n, f.n == f.change
}

func (f *filler) fill(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		n, changed := f.next(path)
		v.SetString(fmt.Sprintf("v%d%s", n, map[bool]string{true: "-changed"}[changed]))
	case reflect.Int, reflect.Int64:
		n, changed := f.next(path)
		v.SetInt(int64(n) + map[bool]int64{true: 1000}[changed])
	case reflect.Float64:
		n, changed := f.next(path)
		v.SetFloat(float64(n)/3 + map[bool]float64{true: 1000}[changed]) // every mantissa bit used
	case reflect.Bool:
		_, changed := f.next(path)
		v.SetBool(!changed)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		key := mapKey
		if _, changed := f.next(path + " key"); changed {
			key = "other"
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		f.fill(elem, path+"["+key+"]")
		m.SetMapIndex(reflect.ValueOf(key), elem)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	default:
		panic(fmt.Sprintf("%s: filler cannot fill a %s; teach it", path, v.Kind()))
	}
}

func fullModel(change int) (catalog.Model, []string) {
	f := &filler{change: change}
	var m catalog.Model
	f.fill(reflect.ValueOf(&m).Elem(), "Model")
	return m, f.paths
}

func fullTarget(change int) (catalog.Target, []string) {
	f := &filler{change: change}
	var t catalog.Target
	f.fill(reflect.ValueOf(&t).Elem(), "Target")
	return t, f.paths
}

// mapKeyInPath is a map key in a field path, other than [*].
var mapKeyInPath = regexp.MustCompile(`\[[^\]*]+\]`)

// Catalog fields a suite does not need at run time, and why; every other field
// must reach the runtime value.
var notCarried = map[string]string{
	"Model.Task":   "chooses invariants in the generator",
	"Model.Tags":   "become tag: labels",
	"Model.Tier":   "reported by `hwtest models`",
	"Model.Line":   "position in models.yaml, for messages",
	"Model.Column": "position in models.yaml, for messages",
	// Positions in models.yaml, for generate's checks against the model file.
	"Model.Inputs[*].Line":     "position in models.yaml, for messages",
	"Model.Inputs[*].Column":   "position in models.yaml, for messages",
	"Model.Outputs.At":         "positions in models.yaml, for messages",
	"Model.Expected[*].Line":   "position in models.yaml, for messages",
	"Model.Expected[*].Column": "position in models.yaml, for messages",
	"Target.Probe":             "probing reads Runner and Provider",
	"Target.Line":              "position in hardware.yaml, for messages",
	"Target.Column":            "position in hardware.yaml, for messages",
}

// isNotCarried matches path against notCarried, where [*] stands for any map key.
func isNotCarried(path string) bool {
	if anyKey := mapKeyInPath.ReplaceAllString(path, "[*]"); anyKey != path && isNotCarried(anyKey) {
		return true
	}
	for p := range notCarried {
		if path == p || strings.HasPrefix(path, p+"[") || strings.HasPrefix(path, p+" ") {
			return true
		}
	}
	return false
}

// TestConverterCarriesEveryField changes one catalog value at a time and wants
// the converted value to change with it: a field added to catalog.Model or
// catalog.Target but not carried by spec.ModelOf or spec.TargetOf fails here.
func TestConverterCarriesEveryField(t *testing.T) {
	for _, c := range []struct {
		name    string
		convert func(change int) (any, []string)
	}{
		{"ModelOf", func(change int) (any, []string) { m, p := fullModel(change); return spec.ModelOf(m), p }},
		{"TargetOf", func(change int) (any, []string) { tg, p := fullTarget(change); return spec.TargetOf(tg), p }},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, paths := c.convert(0)
			for i, path := range paths {
				changed, _ := c.convert(i + 1)
				carried := !reflect.DeepEqual(base, changed)
				switch {
				case !carried && !isNotCarried(path):
					t.Errorf("catalog %s does not reach the runtime value: carry it in spec.%s, or list it in notCarried with the reason", path, c.name)
				case carried && isNotCarried(path):
					t.Errorf("catalog %s is carried now: take it off notCarried", path)
				}
			}
		})
	}
}

// TestLiteralEvaluatesToConverterValue compiles the literals the generator emits for
// a model and a target with every field set, runs them, and compares what they
// evaluate to with what the converter returned: generated suites and `hwtest`
// commands see the same values.
func TestLiteralEvaluatesToConverterValue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	cm, _ := fullModel(0)
	ct, _ := fullTarget(0)
	model, target := spec.ModelOf(cm), spec.TargetOf(ct)
	assertNoZeroField(t, "spec.Model", reflect.ValueOf(model))
	assertNoZeroField(t, "spec.Target", reflect.ValueOf(target))

	modelLit, err := templates.Literal(model)
	if err != nil {
		t.Fatal(err)
	}
	targetLit, err := templates.Literal(target)
	if err != nil {
		t.Fatal(err)
	}
	f := jen.NewFile("main")
	f.Func().Id("main").Params().Block(
		jen.Qual("encoding/json", "NewEncoder").Call(jen.Qual("os", "Stdout")).Dot("Encode").Call(
			jen.Index().Any().Values(modelLit, targetLit)),
	)
	// Inside the module, so it can import runtime; "_" keeps ./... patterns off it.
	dir, err := os.MkdirTemp(".", "_literal")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := fmt.Sprintf("%#v", f)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "./"+filepath.ToSlash(dir)).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go run: %v\n%s\n%s", err, stderr, src)
	}
	var got struct {
		Model  spec.Model
		Target spec.Target
	}
	var pair []json.RawMessage
	if err := json.Unmarshal(out, &pair); err != nil || len(pair) != 2 {
		t.Fatalf("program printed %s: %v", out, err)
	}
	if err := json.Unmarshal(pair[0], &got.Model); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pair[1], &got.Target); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Model, model) {
		t.Errorf("emitted model literal evaluates to\n%#v\nconverter gave\n%#v\nsource:\n%s", got.Model, model, src)
	}
	if !reflect.DeepEqual(got.Target, target) {
		t.Errorf("emitted target literal evaluates to\n%#v\nconverter gave\n%#v\nsource:\n%s", got.Target, target, src)
	}
}

// assertNoZeroField: "every field set" must hold of the converted value too, or
// the literal test would not cover a field.
func assertNoZeroField(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	if v.IsZero() {
		t.Errorf("%s is zero in the fully populated value", path)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				assertNoZeroField(t, path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		}
	case reflect.Pointer:
		assertNoZeroField(t, path, v.Elem())
	case reflect.Map:
		for _, k := range v.MapKeys() {
			assertNoZeroField(t, fmt.Sprintf("%s[%v]", path, k), v.MapIndex(k))
		}
	}
}

// Literal keeps an empty slice apart from a missing one: dims [] is a scalar
// shape, no dims is no override.
func TestLiteralEmptyIsNotNil(t *testing.T) {
	lit, err := templates.Literal(spec.Input{Dims: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%#v", lit), "Dims: []int64{}"; !strings.Contains(got, want) {
		t.Errorf("got %s, want it to hold %s", got, want)
	}
}
