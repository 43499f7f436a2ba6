package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"golang.org/x/sys/unix"
)

// Sandboxes at one path run at once (an audit's parallel checks, two
// CI jobs), each bind-mounted over the same host directory in its own
// mount namespace. Removing that directory while another sandbox is
// mounted on it would detach that sandbox's mount (the kernel lazily
// unmounts mounts on a deleted dentry in every namespace), so the
// directories a sandbox creates for Dir are removed only by the last
// sandbox at that path to close, across processes: each holds a shared
// flock on a lock file for the path, the closer that gets it exclusive
// is the last, and the lock file lists what faultline created.

// dirLock is one sandbox's hold on its Dir.
type dirLock struct {
	f *os.File
}

func lockFileFor(dir string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(filepath.Clean(dir), "/"), "/", "%")
	return filepath.Join(blockrec.RunRoot, "dirs", name+".lock")
}

// holdDir takes the shared hold on dir, creates the directories missing
// on the way to it, and records them for the last closer.
func holdDir(dir string) (*dirLock, error) {
	p := lockFileFor(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// Blocks while a last closer is removing the directories.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: lock %s: %w", p, err)
	}
	var missing []string
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		switch {
		case errors.Is(err, os.ErrExist):
			continue // another sandbox made it just now
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("sandbox: creating %s: %w", missing[i], err)
		}
		if _, err := f.WriteString(missing[i] + "\n"); err != nil {
			f.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	return &dirLock{f: f}, nil
}

// release drops the hold; the last holder removes what was created
// (deepest first, each only if empty).
func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	defer func() { l.f.Close(); l.f = nil }()
	if unix.Flock(int(l.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // another sandbox still uses the path
	}
	b, err := os.ReadFile(l.f.Name())
	if err != nil {
		return
	}
	made := strings.Fields(string(b))
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i])
	}
	l.f.Truncate(0)
}
