package browser

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every Chromium profile (35–100 MB) lives under one folder per user,
// TMPDIR/hwtest-chromium-UID/, named OWNER-RANDOM where OWNER is
// "PID.START": the pid of the process that started the browser and that
// process's start time (in clock ticks since boot, /proc/PID/stat), so that
// a pid the kernel has since given to another process does not pass for the
// owner. A profile is removed when its browser closes; one whose owner died
// first (a crash, a SIGKILL) is removed by the next browser start or CloseAll
// of any hwtest process of that user. Chromium's own temporary files (its
// singleton socket folder) go into the profile too: TMPDIR points there.

// profileEnv marks every process started with a profile: Chromium's crashpad
// handlers detach from the browser and do not carry --user-data-dir, but they
// keep the environment.
const profileEnv = "HWTEST_CHROMIUM_PROFILE"

// profileRoot is the folder of this user's profiles.
func profileRoot() string {
	return filepath.Join(os.TempDir(), "hwtest-chromium-"+strconv.Itoa(os.Getuid()))
}

// newProfile creates an empty profile folder owned by this process.
func newProfile() (string, error) {
	root := profileRoot()
	owner := ownerTag(os.Getpid())
	if owner == "" {
		return "", fmt.Errorf("chromium profile: cannot read this process's start time from /proc/%d/stat", os.Getpid())
	}
	// Another process removes the root when it empties it: try again if it
	// went away between Mkdir and MkdirTemp.
	for range 3 {
		if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("chromium profile folder: %w", err)
		}
		// Lstat: a symlink planted in the shared temporary folder must not
		// redirect the profiles.
		st, err := os.Lstat(root)
		if err != nil {
			continue
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); !st.IsDir() || (ok && int(sys.Uid) != os.Getuid()) {
			return "", fmt.Errorf("chromium profile folder %s is not a folder of this user (uid %d): remove it", root, os.Getuid())
		}
		dir, err := os.MkdirTemp(root, owner+"-")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("chromium profile: %w", err)
		}
		return dir, nil
	}
	return "", fmt.Errorf("chromium profile: %s keeps disappearing", root)
}

// removeProfile removes dir, and the root folder when that leaves it empty.
func removeProfile(dir string) error {
	err := os.RemoveAll(dir)
	_ = os.Remove(filepath.Dir(dir)) // fails while another profile is in it
	return err
}

// removeStaleProfiles removes the profiles whose owner process has exited,
// after killing any process still using them. The profiles of live
// processes (other hwtest runs) are left alone, and so is any name this
// package does not make.
func removeStaleProfiles() {
	root := profileRoot()
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		owner, _, ok := strings.Cut(e.Name(), "-")
		if !ok || !e.IsDir() || ownerAlive(owner) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		waitGone(dir, nil, 2*time.Second)
		_ = os.RemoveAll(dir)
	}
	_ = os.Remove(root) // fails while a profile is in it
}

// ownerTag is "PID.START" for a live process, "" when there is none.
func ownerTag(pid int) string {
	start := startTime(pid)
	if start == "" {
		return ""
	}
	return strconv.Itoa(pid) + "." + start
}

// ownerAlive says whether the process a profile's name records still runs.
// A name it cannot read counts as alive: never delete what is not ours.
func ownerAlive(owner string) bool {
	pidText, _, ok := strings.Cut(owner, ".")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return true
	}
	return ownerTag(pid) == owner
}

// startTime is field 22 of /proc/PID/stat (start time since boot, in clock
// ticks), "" when the process does not exist or has exited (a zombie: this
// container's init does not reap orphans).
func startTime(pid int) string {
	f := statFields(pid)
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19]
}

// statFields are the fields of /proc/PID/stat after "pid (comm)", from state on
// (f[0] state, f[1] ppid, f[19] start time); nil when the process is gone.
func statFields(pid int) []string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// comm may hold spaces and parentheses: split after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// proc is a process known by pid and start time, so that a reused pid is not
// taken for it.
type proc struct {
	pid   int
	start string
}

func (p proc) alive() bool { return p.start != "" && startTime(p.pid) == p.start }

// snapshot is every live process in the tree under root.
func snapshot(root int) []proc {
	if root <= 0 {
		return nil
	}
	var ps []proc
	for _, pid := range processTree(root) {
		if s := startTime(pid); s != "" {
			ps = append(ps, proc{pid, s})
		}
	}
	return ps
}

// waitGone SIGKILLs, until none is left for a few passes in a row or the
// time is up, every process that uses the profile dir (by command line or
// environment) and every process of known that is still alive. Chromium's
// children can fork just as the browser dies, and outlive it for a moment:
// hence the passes.
func waitGone(dir string, known []proc, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n := killUsing(dir)
		for _, p := range known {
			if p.alive() {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// killUsing SIGKILLs the processes that use the profile dir, and says how many.
func killUsing(dir string) int {
	pids := processesUsing(dir)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

// processesUsing lists the live processes started with --user-data-dir=dir
// (Debian's Chromium passes it to every child) or with profileEnv=dir in
// their environment (the browser and its crashpad handlers). The children of
// the @sparticuz Chromium carry neither: [Browser.close] finds them from the
// browser's process tree while the browser is still up.
func processesUsing(dir string) []int {
	flag := []byte("--user-data-dir=" + dir)
	env := []byte(profileEnv + "=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || startTime(pid) == "" {
			continue
		}
		if usesArg(pid, flag) || usesEnv(pid, env) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func usesArg(pid int, want []byte) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	// Chromium rewrites the title of its children: their cmdline can be one
	// string with the arguments joined by spaces (dir holds no space).
	for arg := range bytes.FieldsFuncSeq(cmdline, func(r rune) bool { return r == 0 || r == ' ' }) {
		if bytes.Equal(arg, want) {
			return true
		}
	}
	return false
}

func usesEnv(pid int, want []byte) bool {
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false // another user's process, or gone
	}
	for kv := range bytes.SplitSeq(environ, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}
