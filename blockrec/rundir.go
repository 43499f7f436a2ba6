package blockrec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// RunRoot holds one directory per live faultline process. Mount points, FUSE
// mounts and loop backing files all live below it, so a later run can tell
// from a path alone which process an object belonged to.
const RunRoot = "/run/faultline"

var (
	// rtMu orders creating the runtime dir and object dirs against
	// removing the runtime dir when the last object closes.
	rtMu       sync.Mutex
	objCounter atomic.Int64
)

func runtimeDirPath() string { return filepath.Join(RunRoot, strconv.Itoa(os.Getpid())) }

// RuntimeDir returns /run/faultline/<pid>, creating it if needed together
// with an owner file that records this process's start time: a pid alone may
// be reused by an unrelated process after a crash. The dir is removed again
// when the last Recorder or Checker closes.
func RuntimeDir() (string, error) {
	rtMu.Lock()
	defer rtMu.Unlock()
	return runtimeDirLocked()
}

func runtimeDirLocked() (string, error) {
	dir := runtimeDirPath()
	owner := filepath.Join(dir, ownerFile)
	if _, err := os.Stat(owner); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("blockrec: creating runtime dir: %w", err)
	}
	st, err := procStartTime(os.Getpid())
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(owner, []byte(st+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("blockrec: writing owner file: %w", err)
	}
	return dir, nil
}

// NewObjectDir is newObjectDir for objects other packages keep in the
// runtime dir (the supervisor's tmpfs sandboxes): made under the same
// lock as the idle check, so the dir cannot be removed in between. The
// owner removes it when done and then calls ReleaseRuntimeDir.
func NewObjectDir(kind string) (string, error) { return newObjectDir(kind) }

// ReleaseRuntimeDir removes the runtime dir if no object of any package
// is left in it.
func ReleaseRuntimeDir() error { return removeRuntimeDirIfIdle() }

// newObjectDir makes a fresh directory for one object (a recorder, a
// checker) under the runtime dir. The object must be registered first, so
// the runtime dir is not removed under it.
func newObjectDir(kind string) (string, error) {
	rtMu.Lock()
	defer rtMu.Unlock()
	root, err := runtimeDirLocked()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, fmt.Sprintf("%s-%d", kind, objCounter.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("blockrec: creating %s: %w", dir, err)
	}
	return dir, nil
}

// ownerFile in the runtime dir names the process that owns it.
const ownerFile = "owner"

// removeRuntimeDirIfIdle removes the runtime dir once no object is live
// and nothing but its owner file is left in it: other packages keep
// their own objects there too (the supervisor's tmpfs sandboxes), which
// are not this package's to remove.
func removeRuntimeDirIfIdle() error {
	rtMu.Lock()
	defer rtMu.Unlock()
	live.Lock()
	n := len(live.m)
	live.Unlock()
	if n > 0 {
		return nil
	}
	dir := runtimeDirPath()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blockrec: %w", err)
	}
	for _, e := range ents {
		if e.Name() != ownerFile {
			return nil
		}
	}
	return removeTree(dir)
}

// procStartTime returns field 22 of /proc/<pid>/stat (start time in clock
// ticks since boot); together with the pid it names a process uniquely
// until reboot.
func procStartTime(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", fmt.Errorf("blockrec: reading start time of pid %d: %w", pid, err)
	}
	// The command name may contain spaces and parentheses; fields resume
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", fmt.Errorf("blockrec: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return "", fmt.Errorf("blockrec: short /proc/%d/stat", pid)
	}
	return f[19], nil
}
