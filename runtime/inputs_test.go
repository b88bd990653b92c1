package runtime

import (
	goruntime "runtime"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// Dims far beyond memory are refused with their size before anything is
// allocated; they used to end the suite in a Go fatal out-of-memory.
func TestSynthesizeInputsRefusesInputsOverBudget(t *testing.T) {
	infos := []InputSpec{
		info("pixels", ort.TensorElementDataTypeFloat, -1, -1),
		info("ids", ort.TensorElementDataTypeInt64, -1),
	}
	for _, c := range []struct {
		name string
		ov   map[string]Input
		want string
	}{
		{"issue 8", map[string]Input{"pixels": {Dims: []int64{1000000, 1000000}}},
			`input "pixels": dims [1000000 1000000] hold 1000000000000 float32 elements, 4000000000000 bytes (3.6 TiB); hwtest synthesises inputs of at most 1073741824 bytes (1.0 GiB) each`},
		{"int64 product overflows", map[string]Input{"pixels": {Dims: []int64{1 << 40, 1 << 40}}},
			`input "pixels": dims [1099511627776 1099511627776] hold more than 9223372036854775807 elements`},
		{"one over", map[string]Input{"ids": {Dims: []int64{maxInputBytes/8 + 1}}},
			`input "ids": dims [134217729] hold 134217729 int64 elements, 1073741832 bytes`},
		{"negative", map[string]Input{"ids": {Dims: []int64{-2}}}, `input "ids": dims [-2]: a dim is negative`},
	} {
		var err error
		used := allocated(func() { _, err = SynthesizeInputs("m", infos, c.ov) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant it to contain %s", c.name, err, c.want)
		}
		if used > 1<<20 {
			t.Errorf("%s: allocated %d MiB before refusing", c.name, used>>20)
		}
	}
}

// allocated is how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	f()
	goruntime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
