package generator

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockName is the lock file in generated/ (ignored by git). Its content says who
// holds it, for the message a waiting writer prints.
const lockName = ".generate.lock"

// Lock takes an exclusive lock on root/generated, waiting for the holder to finish
// if there is one (and saying so on waiting, when not nil). The lock is an flock on
// a file, so the kernel drops it when its holder exits, even on SIGKILL: no stale
// lock to clean up. The returned func releases it.
func Lock(root string, waiting io.Writer) (unlock func(), err error) {
	return LockIn(root, Repo, waiting)
}

// LockIn is Lock on out's folder.
func LockIn(root string, out Out, waiting io.Writer) (unlock func(), err error) {
	dir := filepath.Join(root, filepath.FromSlash(out.Dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("generate lock: %w", err)
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if waiting != nil {
			fmt.Fprintf(waiting, "waiting for generate lock held by %s on %s\n", holder(path), path)
		}
		err = flock(f, syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("generate lock %s: %w", path, err)
	}
	// Say who holds it now; a failure here only makes another waiter's message vaguer.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(holderLine()), 0)
	}
	return func() {
		f.Truncate(0)
		flock(f, syscall.LOCK_UN)
		f.Close()
	}, nil
}

// readLock takes a shared lock on root/generated for a reader (verify, a dry run):
// it waits while a writer holds the lock, and creates nothing, so a read-only
// checkout can still be verified. Without a lock file no writer has run here, and
// there is nothing to wait for.
func readLock(root string, out Out, waiting io.Writer) (unlock func(), err error) {
	path := filepath.Join(root, filepath.FromSlash(out.Dir), lockName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("generate lock: %w", err)
	}
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if waiting != nil {
			fmt.Fprintf(waiting, "waiting for generate lock held by %s on %s\n", holder(path), path)
		}
		err = flock(f, syscall.LOCK_SH)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("generate lock %s: %w", path, err)
	}
	return func() {
		flock(f, syscall.LOCK_UN)
		f.Close()
	}, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// holderLine is what the lock file says while this process holds it:
// "pid 4242 (hwtest generate started at 2026-11-23T16:00:00Z)".
func holderLine() string {
	cmd := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	return fmt.Sprintf("pid %d (%s started at %s)\n", os.Getpid(), strings.Join(cmd, " "), time.Now().UTC().Format(time.RFC3339))
}

// holder reads who holds the lock; the holder may not have written it yet.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "another process"
}
