package history

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/result"
)

// fill sets every exported field of v, recursively, to a value derived from seed,
// so a field the history forgets to store shows up as a difference.
func fill(v reflect.Value, seed *int) {
	*seed++
	n := *seed
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", n%3) + string(rune('a'+n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		fill(k, seed)
		fill(e, seed)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), seed)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 23, 10, 0, n%60, 123456000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed)
			}
		}
	}
}

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.duckdb")
	db, err := Open(context.Background(), path, ReadWrite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// TestStoreReadsBackEveryField stores a cell with every field set and reads the same
// cell back: a field added to the matrix without a column fails here.
func TestStoreReadsBackEveryField(t *testing.T) {
	db, _ := openTemp(t)
	var c matrix.Cell
	seed := 0
	fill(reflect.ValueOf(&c).Elem(), &seed)
	c.RunID, c.RunTime = "", time.Time{} // a run's own matrix does not repeat them
	c2 := c
	c2.Target = "other"
	want := matrix.Assemble([]matrix.Cell{c, c2}, nil, nil)
	want.RunID = "20261123T100000Z-abcdef"
	want.Generated = time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)
	want.Host = "box"
	want.Problems = []string{"suite x: stopped"}
	want.DetectedAt = time.Date(2026, 11, 23, 9, 59, 0, 0, time.UTC)
	want.Detection = []result.Detected{{Target: "cpu", Available: true, Name: "Xeon", Features: []string{"avx2"}},
		{Target: "cuda", Reason: "no libcudart"}}
	ctx := context.Background()
	if err := db.Store(ctx, Run{Matrix: want}); err != nil {
		t.Fatal(err)
	}
	got, err := db.RunMatrix(ctx, want.RunID, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := db.Samples(ctx, want.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Cells {
		got.Cells[i].SamplesMS = samples[c.Model+"/"+c.Target]
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(matrix.Cell{})); d != "" {
		t.Errorf("read back differs (-stored +read):\n%s", d)
	}
}
