package generator

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func generatedFile(body string) []byte {
	return []byte("// " + Header + "\n\npackage x_test\n" + body)
}

// snapshot is every file under root with its bytes, and every folder; the lock file
// stays once made (git ignores it) and is not part of the tree.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		if d.Name() == lockName {
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oldTree is a generated/ with a hand-written file, a file the new output changes,
// one it leaves alone and one it drops (stale), in two family folders.
func oldTree(t *testing.T) (root string, files map[string][]byte) {
	t.Helper()
	root = t.TempDir()
	for p, b := range map[string][]byte{
		"generated/generate.go":        []byte("package generated\n"),
		"generated/audio/a_test.go":    generatedFile("// a v1\n"),
		"generated/audio/same_test.go": generatedFile("// same\n"),
		"generated/vision/v_test.go":   generatedFile("// v v1\n"),
		"generated/vision/old_test.go": generatedFile("// stale\n"),
	} {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files = map[string][]byte{
		"generated/audio/a_test.go":    generatedFile("// a v2\n"),
		"generated/audio/same_test.go": generatedFile("// same\n"),
		"generated/audio/new_test.go":  generatedFile("// new\n"),
		"generated/text/t_test.go":     generatedFile("// t\n"),
		"generated/vision/v_test.go":   generatedFile("// v v2\n"),
	}
	return root, files
}

// A step that fails after others succeeded (a read-only family folder: its stale
// file cannot be removed, its file cannot be replaced) leaves the tree byte for byte
// as it was: the old tree or the new one, never a mix.
func TestWriteFailingLateLeavesOldTree(t *testing.T) {
	for _, step := range []string{"remove old_test.go", "rename v_test.go", "rename new_test.go"} {
		t.Run(step, func(t *testing.T) {
			root, files := oldTree(t)
			before := snapshot(t, root)
			op, name, _ := strings.Cut(step, " ")
			fail := func(p string) error {
				if strings.HasSuffix(p, string(filepath.Separator)+name) {
					return &fs.PathError{Op: op, Path: p, Err: fs.ErrPermission}
				}
				return nil
			}
			defer func(r func(string, string) error, rm func(string) error) { rename, remove = r, rm }(rename, remove)
			rename = func(from, to string) error {
				if op == "rename" {
					if err := fail(to); err != nil {
						return err
					}
				}
				return os.Rename(from, to)
			}
			remove = func(p string) error {
				if op == "remove" {
					if err := fail(p); err != nil {
						return err
					}
				}
				return os.Remove(p)
			}
			if _, err := Write(root, files, nil); err == nil {
				t.Fatal("want an error")
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed by a failed Write (-before +after):\n%s", diff)
			}
		})
	}
}

// The same with a real read-only folder, where chmod stops the writer (not as root).
func TestWriteReadOnlyFolderLeavesOldTree(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores folder permissions; TestWriteFailingLateLeavesOldTree injects the failure instead")
	}
	root, files := oldTree(t)
	vision := filepath.Join(root, "generated/vision")
	if err := os.Chmod(vision, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(vision, 0o755)
	before := snapshot(t, root)
	if _, err := Write(root, files, nil); err == nil {
		t.Fatal("want an error")
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("tree changed by a failed Write (-before +after):\n%s", diff)
	}
}

// Concurrent writers (two `hwtest run`s with generated/ out of date) all succeed
// and leave exactly the new tree.
func TestConcurrentWrites(t *testing.T) {
	root, files := oldTree(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Write(root, files, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	want := map[string]string{"generated/": "", "generated/generate.go": "package generated\n"}
	for p, b := range files {
		want[p] = string(b)
		want[filepath.Dir(p)+"/"] = ""
	}
	got := snapshot(t, root)
	delete(got, "./")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree after concurrent writes (-want +got):\n%s", diff)
	}
}

// A second writer waits for the first, saying who holds the lock, then proceeds.
// Write, and Compare (verify, generate --dry-run), wait for a holder of the lock and
// say who holds it; neither touches or reads the tree before it is released.
func TestWriteAndCompareWaitForLock(t *testing.T) {
	for _, op := range []struct {
		name string
		run  func(root string, files map[string][]byte, waiting io.Writer) ([]Change, error)
	}{{"Write", Write}, {"Compare", Compare}} {
		t.Run(op.name, func(t *testing.T) {
			root, files := oldTree(t)
			unlock, err := Lock(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			var msg syncBuffer
			done := make(chan error)
			go func() {
				_, err := op.run(root, files, &msg)
				done <- err
			}()
			for i := 0; !strings.Contains(msg.String(), "waiting"); i++ {
				if i == 500 {
					t.Fatalf("no waiting message; got %q", msg.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			want := fmt.Sprintf("waiting for generate lock held by pid %d (%s ", os.Getpid(), filepath.Base(os.Args[0]))
			if !strings.HasPrefix(msg.String(), want) || !strings.Contains(msg.String(), " started at ") {
				t.Errorf("message %q, want it to start %q and say when", msg.String(), want)
			}
			select {
			case err := <-done:
				t.Fatalf("%s finished while the lock was held: %v", op.name, err)
			default:
			}
			unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			written := bytes.Equal(must(os.ReadFile(filepath.Join(root, "generated/audio/a_test.go"))), files["generated/audio/a_test.go"])
			if written != (op.name == "Write") {
				t.Errorf("%s: file written = %v", op.name, written)
			}
		})
	}
}

func must(b []byte, _ error) []byte { return b }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A writer killed part-way (SIGKILL: no undo runs) leaves its temporary files and
// backups; they start with a dot so go ignores them, and the next Write, holding
// the lock so no live writer owns them, removes them.
func TestWriteRemovesDebrisOfKilledWriter(t *testing.T) {
	root, files := oldTree(t)
	debris := []string{
		"generated/audio/.a_test.go.123456.hwtest-tmp",
		"generated/vision/.v_test.go.4242-0.hwtest-backup",
		"generated/vision/v_test.go.hwtest-tmp", // the name writers used before
	}
	for _, p := range debris {
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(root, files, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range debris {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

// A reader creates nothing (a read-only checkout can be verified) and readers do
// not wait for each other.
func TestCompareCreatesNothingAndShares(t *testing.T) {
	root, files := oldTree(t)
	lockFile := filepath.Join(root, Dir, lockName)
	os.Remove(lockFile)
	if _, err := Compare(root, files, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockFile); err == nil {
		t.Errorf("Compare created %s", lockFile)
	}
	unlock, err := Lock(root, nil) // a lock file, as after a first generate
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	held, err := readLock(root, Repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	var msg syncBuffer
	done := make(chan error)
	go func() { _, err := Compare(root, files, &msg); done <- err }()
	select {
	case err := <-done:
		if err != nil || msg.String() != "" {
			t.Errorf("Compare beside another reader: %v, %q", err, msg.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Compare waited for another reader")
	}
}
