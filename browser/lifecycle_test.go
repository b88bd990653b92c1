package browser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper process (see TestMain): it starts
// the browser for the provider named, prints its profile and pid, and waits
// to be killed.
const helperEnv = "HWTEST_BROWSER_TEST_HELPER"

func browserHelper(provider string) int {
	b, err := Shared(Config{}, provider == "webnn")
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	// A session, so that a renderer runs a model as in a cell.
	if model := repoFile(sileroV5); isFile(model) {
		if _, err := b.Open(model, provider, ""); err != nil {
			fmt.Println("ERROR", err)
			return 1
		}
	}
	fmt.Println("PROFILE", b.userDataDir, "PID", b.PID)
	select {} // until killed
}

// TestKilledOwnerLeavesNothing SIGKILLs a process that runs Chromium through
// this package, in the middle of a session, its browser frozen: no Chromium
// process of it may outlive it by more than a few seconds, and CloseAll (as
// at the end of a run; a browser start does the same) removes the profile it
// left.
func TestKilledOwnerLeavesNothing(t *testing.T) {
	for _, provider := range []string{"wasm", "webnn"} {
		t.Run(provider, func(t *testing.T) {
			requireBrowser(t, provider, "")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+provider)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var line string
			select {
			case line = <-lines:
			case <-time.After(2 * time.Minute):
			}
			var dir string
			var pid int
			if _, err := fmt.Sscanf(line, "PROFILE %s PID %d", &dir, &pid); err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("helper said %q (%v); stderr: %s", line, err, stderr.String())
			}
			if filepath.Dir(dir) != profileRoot() || !strings.HasPrefix(filepath.Base(dir), strconv.Itoa(cmd.Process.Pid)+".") {
				t.Errorf("profile %s is not under %s named for the helper's pid %d", dir, profileRoot(), cmd.Process.Pid)
			}
			// Chromium's temporary files go into the profile (Debian's
			// Chromium makes a singleton socket folder there; @sparticuz's none).
			if !usesEnv(pid, []byte("TMPDIR="+dir)) {
				t.Errorf("browser %d does not run with TMPDIR=%s", pid, dir)
			}
			if link, err := os.Readlink(filepath.Join(dir, "SingletonSocket")); err == nil && !strings.HasPrefix(link, dir+"/") {
				t.Errorf("SingletonSocket -> %q: want it inside the profile", link)
			}
			var chromium []proc
			for _, p := range snapshot(cmd.Process.Pid) {
				if p.pid != cmd.Process.Pid {
					chromium = append(chromium, p)
				}
			}
			if len(chromium) < 4 {
				t.Errorf("only %d processes under the helper: want the browser and its children", len(chromium))
			}

			// Chromium also exits by itself when its DevTools pipe closes, which
			// a hung browser cannot notice: freeze it (SIGSTOP) so that only the
			// kernel's parent-death signal can end it.
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			var left []string
			for time.Since(killed) < 5*time.Second {
				left = left[:0]
				pids := processesUsing(dir)
				for _, p := range chromium {
					if p.alive() && !slices.Contains(pids, p.pid) {
						pids = append(pids, p.pid)
					}
				}
				for _, pid := range pids {
					left = append(left, describe(pid))
				}
				if len(left) == 0 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("%d chromium processes under the helper; %d left %v after its SIGKILL", len(chromium), len(left), time.Since(killed).Round(10*time.Millisecond))
			if len(left) > 0 {
				t.Errorf("chromium processes outlived their owner by 5 s: %v", left)
				waitGone(dir, chromium, 5*time.Second) // leave nothing behind for the next test
			}

			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("the killed helper's profile %s is not there to clean up (%v): the test shows nothing", dir, err)
			}
			CloseAll() // as at the end of a run; a browser start does the same
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the dead helper's profile %s survived CloseAll (%v)", dir, err)
			}
		})
	}
}

func describe(pid int) string {
	cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return fmt.Sprintf("%d %.120q", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
}

// removeStaleProfiles removes a dead process's profile and nothing else: not
// a live process's (another hwtest run), not a name it does not make.
func TestRemoveStaleProfiles(t *testing.T) {
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	root := profileRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(root, fmt.Sprintf("%d.1-test", done.Process.Pid))
	reused := filepath.Join(root, fmt.Sprintf("%d.1-test", os.Getpid())) // our pid, another start time
	live := filepath.Join(root, ownerTag(os.Getpid())+"-test")
	other := filepath.Join(root, "not-ours")
	for _, d := range []string{dead, reused, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "Default"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, d := range []string{dead, reused, live, other} {
			_ = os.RemoveAll(d)
		}
	}()
	removeStaleProfiles()
	for d, want := range map[string]bool{dead: false, reused: false, live: true, other: true} {
		_, err := os.Stat(d)
		if got := err == nil; got != want {
			t.Errorf("%s: exists %v after the clean-up, want %v", filepath.Base(d), got, want)
		}
	}
}
