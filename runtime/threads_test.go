package runtime

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hwtest/hwtest/internal/testenv"
)

func TestThreadsRejectsNonsense(t *testing.T) {
	for _, bad := range []string{"banana", "-1", "1.5", "2x"} {
		t.Setenv("HWTEST_THREADS", bad)
		if _, err := Threads(); err == nil || !strings.Contains(err.Error(), `HWTEST_THREADS="`+bad+`"`) || !strings.Contains(err.Error(), "such as") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for s, want := range map[string]int{"": 0, "0": 0, "1": 1, "8": 8} {
		t.Setenv("HWTEST_THREADS", s)
		if n, err := Threads(); err != nil || n != want {
			t.Errorf("%q: %d %v, want %d", s, n, err, want)
		}
	}
}

// sessionThreads counts the threads ONNX Runtime's intra-op pool starts for a
// session (n threads: the caller's and n-1 workers): those that appear when it is
// created and end when it is destroyed. Go never ends its own threads, so none of
// them is counted.
func sessionThreads(t *testing.T, path string, reference bool) int {
	t.Helper()
	tasks := func() map[string]bool {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, e := range ents {
			m[e.Name()] = true
		}
		return m
	}
	before := tasks()
	s, err := openSession(path, Target{ID: "cpu", Provider: CPUProvider}, false, reference, "")
	if err != nil {
		t.Fatal(err)
	}
	during := tasks()
	s.Close()
	after := tasks()
	workers := 0
	for id := range during {
		if !before[id] && !after[id] {
			workers++
		}
	}
	return workers + 1
}

// HWTEST_THREADS reaches the target's session, and only it: the CPU reference
// keeps ONNX Runtime's default.
func TestThreadsReachTheSession(t *testing.T) {
	requireORT(t)
	_, err := os.Stat("/proc/self/task")
	testenv.Need(t, "/proc/self/task (a session's threads are counted there)", err)
	p := writeZoo(t, "tiny-bert")
	t.Setenv("HWTEST_THREADS", "")
	def := sessionThreads(t, p, false)
	for _, n := range []int{1, 5} {
		t.Setenv("HWTEST_THREADS", strconv.Itoa(n))
		if got := sessionThreads(t, p, false); got != n {
			t.Errorf("HWTEST_THREADS=%d: the session runs %d intra-op threads", n, got)
		}
		if got := sessionThreads(t, p, true); got != def {
			t.Errorf("HWTEST_THREADS=%d: the reference runs %d intra-op threads, want the default %d", n, got, def)
		}
	}
}

// The cell's provenance says what the session got, only when the knob is set, and
// hardware.yaml's options are left as they were.
func TestProvenanceRecordsThreads(t *testing.T) {
	gpu := Target{ID: "cuda", Provider: "CUDAExecutionProvider", Options: map[string]string{"device_id": "0"}}
	web := Target{ID: "wasm", Runner: "browser", Provider: "wasm"}
	t.Setenv("HWTEST_THREADS", "")
	if o := (&Cell{Target: gpu}).provenance().Options; len(o) != 1 || o["device_id"] != "0" {
		t.Errorf("unset: %v", o)
	}
	t.Setenv("HWTEST_THREADS", "1")
	if o := (&Cell{Target: gpu}).provenance().Options; len(o) != 2 || o["intra_op_num_threads"] != "1" || o["device_id"] != "0" {
		t.Errorf("HWTEST_THREADS=1: %v", o)
	}
	if _, changed := gpu.Options["intra_op_num_threads"]; changed {
		t.Errorf("the target's own options changed: %v", gpu.Options)
	}
	if o := (&Cell{Target: Target{ID: "cpu", Provider: CPUProvider}}).provenance().Options; o["intra_op_num_threads"] != "1" {
		t.Errorf("cpu, HWTEST_THREADS=1: %v", o)
	}
	if o := (&Cell{Target: web}).provenance().Options; o != nil {
		t.Errorf("a browser target does not take it: %v", o)
	}
}

// A bad HWTEST_THREADS fails the session, not the probe: the target is here.
func TestBadThreadsIsNotUnavailable(t *testing.T) {
	requireORT(t)
	t.Setenv("HWTEST_THREADS", "banana")
	if r := probe(Target{ID: "cuda", Provider: "CUDAExecutionProvider"}); strings.Contains(r, "HWTEST_THREADS") {
		t.Errorf("probe: %s", r)
	}
	if _, err := OpenSession(writeZoo(t, "tiny-bert"), Target{ID: "cpu", Provider: CPUProvider}, false); err == nil || !strings.Contains(err.Error(), "HWTEST_THREADS") {
		t.Errorf("session: %v", err)
	}
}
