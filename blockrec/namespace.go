package blockrec

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DetachForeign is for a thread that has just unshared its mount namespace
// (the sandbox of a traced run): the new namespace starts as a copy of the
// host's, with every disk of every other run of faultline in it, and a copy
// of a mount pins what it mounts. An ext4 mount copied from another run
// keeps that run's loop device bound after the run unmounts it at home, so
// the loop keeps its backing file open and the run cannot unmount its FUSE
// server. DetachForeign lazily detaches, in the calling thread's namespace
// only, every mount of faultline's (below RunRoot, or of a loop device
// backed by a file below RunRoot) except those at or below the keep
// paths: the sandbox as the program sees it, and as faultline's own
// callbacks on the tracing thread (which runs in this namespace) walk it.
func DetachForeign(keep ...string) error {
	ms, err := readMountInfoFile("/proc/thread-self/mountinfo")
	if err != nil {
		return err
	}
	ours := func(m mountInfo) bool {
		for _, k := range keep {
			k = filepath.Clean(k)
			if m.point == k || strings.HasPrefix(m.point, k+"/") {
				return false
			}
		}
		if strings.HasPrefix(m.point, RunRoot+"/") {
			return true
		}
		if n, ok := strings.CutPrefix(m.source, "/dev/loop"); ok {
			if i, err := strconv.Atoi(n); err == nil {
				return strings.HasPrefix(loopBackingFile(i), RunRoot+"/")
			}
		}
		return false
	}
	var errs []error
	// Children were mounted after parents: detach in reverse.
	for i := len(ms) - 1; i >= 0; i-- {
		if !ours(ms[i]) {
			continue
		}
		if err := unix.Unmount(ms[i].point, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("blockrec: detaching %s in the sandbox namespace: %w", ms[i].point, err))
		}
	}
	return errors.Join(errs...)
}
