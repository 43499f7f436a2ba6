package blockrec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FSType names a file system the recorder can create and the checker can
// mount.
type FSType string

const (
	Ext4  FSType = "ext4"
	XFS   FSType = "xfs"
	Btrfs FSType = "btrfs"
)

// mkfsCommand builds the mkfs invocation. Discards are turned off because
// the FUSE file does not implement fallocate, and ext4's lazy inode-table
// and journal initialisation is turned off because it would otherwise run
// in a kernel thread after mount and put writes in the log that no program
// made.
func (t FSType) mkfsCommand(dev string, extra []string) (*exec.Cmd, error) {
	var args []string
	switch t {
	case Ext4:
		args = []string{"-F", "-q", "-b", "4096", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0"}
	case XFS:
		args = []string{"-f", "-q", "-K"}
	case Btrfs:
		args = []string{"-f", "-q", "-K"}
	default:
		return nil, fmt.Errorf("blockrec: unsupported file system %q (want ext4, xfs or btrfs)", t)
	}
	args = append(args, extra...)
	args = append(args, dev)
	bin := "mkfs." + string(t)
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("blockrec: %s not found (install e2fsprogs, xfsprogs or btrfs-progs): %w", bin, err)
	}
	cmd := exec.Command(path, args...)
	// xfsprogs refuses file systems under 300 MiB unless it believes it is
	// running under fstests; a small RAM disk is exactly such a test.
	cmd.Env = append(os.Environ(), "TEST_DIR=1", "TEST_DEV=1", "QA_CHECK_FS=1")
	return cmd, nil
}

func (t FSType) mkfs(dev string, extra []string) error {
	cmd, err := t.mkfsCommand(dev, extra)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("blockrec: %s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// crashMount returns the flags and data for mounting a crash image.
//
// ext4 and xfs replay their journal on a read-only mount as long as the
// block device is writable, so the image is mounted read-only: recovery runs
// exactly as after a power cut, but nothing else is written and unmount has
// nothing to flush; btrfs replays its log tree read-only too (and commits
// the result). xfs refuses two mounted file systems with the same UUID, and
// every crash image has the same one, hence nouuid.
func (t FSType) crashMount() (flags uintptr, data string) {
	if t == XFS {
		return unix.MS_RDONLY, "nouuid"
	}
	return unix.MS_RDONLY, ""
}

// mountFS mounts dev at dir, retrying briefly on EBUSY: right after a
// device is configured udev-less kernels still can race with a previous
// holder's release.
func mountFS(dev, dir string, t FSType, flags uintptr, data string) error {
	var err error
	for i := 0; i < 20; i++ {
		err = unix.Mount(dev, dir, string(t), flags, data)
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("blockrec: mount -t %s %s %s (%s): %w", t, dev, dir, data, err)
	}
	return nil
}

// unmountFS unmounts dir. A busy mount (a process still has a file open in
// the sandbox) gets a few retries and then a lazy unmount, so cleanup never
// leaves the mount behind even if it cannot be synchronous.
func unmountFS(dir string) error {
	var err error
	for i := 0; i < 10; i++ {
		err = unix.Unmount(dir, 0)
		if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if derr := unix.Unmount(dir, unix.MNT_DETACH); derr == nil {
		return fmt.Errorf("blockrec: unmounting %s: %w (detached lazily)", dir, err)
	}
	return fmt.Errorf("blockrec: unmounting %s: %w", dir, err)
}
