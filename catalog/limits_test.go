package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	f()
	goruntime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// validModels writes valid models, each with its own id, until the text is at least size bytes.
func validModels(size int) []byte {
	var b strings.Builder
	b.WriteString("models:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  - {id: m%d, family: vision, task: t, source: \"zoo:a\"}\n", i)
	}
	return []byte(b.String())
}

// oneError parses models against the valid hardware catalog and returns the only
// error reported, failing the test when there is not exactly one.
func oneError(t *testing.T, models []byte) string {
	t.Helper()
	hardware := readFile(t, "testdata/valid/hardware.yaml")
	var err error
	used := allocated(func() { _, err = Parse("models.yaml", models, "hardware.yaml", hardware) })
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d errors, want 1; the first three:\n%s", len(lines), strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	// What is parsed is at most maxFileBytes, and the YAML library's tree costs
	// about 50 bytes per byte of input: a bound on memory that holds for any file.
	if limit := uint64(64 * maxFileBytes); used > limit {
		t.Errorf("Parse allocated %d MiB, want at most %d MiB", used>>20, limit>>20)
	}
	return lines[0]
}

// The catalog: valid entries, far larger than any real catalog. It is
// refused before parsing, with one error naming the file and the limit.
func TestHugeCatalogIsOneError(t *testing.T) {
	models := validModels(50 << 20)
	var got string
	used := allocated(func() { got = oneError(t, models) })
	want := fmt.Sprintf("models.yaml: the file is %d bytes; a catalog may be at most %d bytes (4 MiB)", len(models), maxFileBytes)
	if !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if used > 1<<20 {
		t.Errorf("refusing a catalog for its size allocated %d KiB; it must not parse it", used>>10)
	}
}

// Load refuses a big file without reading it whole.
func TestLoadRefusesHugeFileUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 1 GiB on paper, nothing on disk.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	used := allocated(func() { _, err = Load(path, "testdata/valid/hardware.yaml") })
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), path+": the file is 1073741824 bytes; a catalog may be at most") {
		t.Errorf("Load of a 1 GiB catalog: %v", err)
	}
	if used > 2*maxFileBytes {
		t.Errorf("Load allocated %d MiB for a file it must not read", used>>20)
	}
}

// Within the size limit, a file can still hold more nodes than a catalog needs
// (here one input's value list). The limit is one error, not one per model after it.
func TestNodeLimitIsOneError(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n  - {id: a, family: vision, task: t, source: \"zoo:a\", inputs: {x: {value: [")
	b.WriteString(strings.Repeat("1,", maxNodes))
	b.WriteString("1]}}}\n")
	b.Write(validModels(100 << 10)[len("models:\n"):])
	got := oneError(t, []byte(b.String()))
	want := fmt.Sprintf("the catalog holds more than %d YAML nodes", maxNodes)
	if !strings.HasPrefix(got, "models.yaml:2:") || !strings.Contains(got, want) {
		t.Errorf("got %s\nwant models.yaml:2:...: %s...", got, want)
	}
}

// An alias bomb: each level names the one before it ten times, 10^9 entries in
// all. The decoder never walks into a models item that is not a mapping, so this
// is ten errors, found without expanding anything.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-0: &a0 [{id: a, family: vision, task: t, source: zoo:a}]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("models: [*a9, *a9, *a9, *a9, *a9, *a9, *a9, *a9, *a9, *a9]\n")
	hardware := readFile(t, "testdata/valid/hardware.yaml")
	var err error
	used := allocated(func() { _, err = Parse("models.yaml", []byte(b.String()), "hardware.yaml", hardware) })
	if err == nil {
		t.Fatal("an alias bomb was accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 10 || !strings.HasSuffix(lines[0], "model #1: want a mapping, got a list") {
		t.Errorf("%d errors, want 10 of \"want a mapping\"; the first: %s", len(lines), lines[0])
	}
	if used > 1<<20 {
		t.Errorf("Parse allocated %d KiB on a 1 KiB file", used>>10)
	}
}

// A merge-key bomb of valid entries: each mapping merges the one before it ten
// times over, so the first model's fields come from 10^9 merged mappings.
func TestMergeBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-0: &m0 {task: t}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-%d: &m%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*m%d", i-1)
		}
		b.WriteString("]}\n")
	}
	b.WriteString("models:\n  - {<<: *m9, id: a, family: vision, source: zoo:a}\n  - {id: b, family: vision, task: t, source: zoo:b}\n")
	got := oneError(t, []byte(b.String()))
	if want := fmt.Sprintf("the catalog holds more than %d YAML nodes", maxNodes); !strings.Contains(got, want) {
		t.Errorf("got %s\nwant it to say %q", got, want)
	}
}
