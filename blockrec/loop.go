package blockrec

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// loopDev is one attached loop device. We keep the device open for as long
// as we own it: with LO_FLAGS_AUTOCLEAR the kernel detaches it on the last
// close, so if this process is killed, unmounting whatever sits on the
// device is enough to make it go away.
type loopDev struct {
	Path string
	Num  int
	f    *os.File
}

type loopConfig struct {
	backing  string
	directIO bool
}

// attachLoop binds a free loop device to the backing file. LOOP_CTL_GET_FREE
// and LOOP_CONFIGURE are not atomic together, so another process may take
// the device in between; EBUSY means try the next one.
func attachLoop(cfg loopConfig) (*loopDev, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("blockrec: opening loop-control: %w", err)
	}
	defer ctl.Close()
	backing, err := os.OpenFile(cfg.backing, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("blockrec: opening loop backing file: %w", err)
	}
	// The loop driver takes its own reference to the file.
	defer backing.Close()

	for try := 0; try < 64; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("blockrec: LOOP_CTL_GET_FREE: %w", err)
		}
		path := fmt.Sprintf("/dev/loop%d", n)
		f, err := openLoopNode(path, n)
		if err != nil {
			return nil, err
		}
		lc := unix.LoopConfig{Fd: uint32(backing.Fd())}
		lc.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
		if cfg.directIO {
			lc.Info.Flags |= unix.LO_FLAGS_DIRECT_IO
		}
		copy(lc.Info.File_name[:len(lc.Info.File_name)-1], cfg.backing)
		err = unix.IoctlLoopConfigure(int(f.Fd()), &lc)
		if errors.Is(err, unix.EBUSY) {
			f.Close()
			continue
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("blockrec: LOOP_CONFIGURE %s: %w", path, err)
		}
		return &loopDev{Path: path, Num: n, f: f}, nil
	}
	return nil, fmt.Errorf("blockrec: no free loop device after 64 tries")
}

// openLoopNode opens /dev/loopN; devtmpfs normally creates the node when
// LOOP_CTL_GET_FREE adds a device, but not instantly on every setup.
func openLoopNode(path string, n int) (*os.File, error) {
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) || i == 50 {
			return nil, fmt.Errorf("blockrec: opening %s: %w", path, err)
		}
		if i == 10 {
			_ = unix.Mknod(path, unix.S_IFBLK|0o600, int(unix.Mkdev(7, uint32(n))))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// dropCaches discards the block device's page cache. A pooled device serves
// a different crash image after each swap; without this the next mount could
// read blocks cached from the previous image.
func (l *loopDev) dropCaches() error {
	if err := unix.IoctlSetInt(int(l.f.Fd()), unix.BLKFLSBUF, 0); err != nil {
		return fmt.Errorf("blockrec: BLKFLSBUF %s: %w", l.Path, err)
	}
	return nil
}

// Close detaches the device. LOOP_CLR_FD on a device that is still mounted
// only arms autoclear (already set), so closing our descriptor is what
// finally lets it go once the mount is gone.
func (l *loopDev) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unix.IoctlSetInt(int(l.f.Fd()), unix.LOOP_CLR_FD, 0)
	if errors.Is(err, unix.ENXIO) {
		err = nil // already detached
	}
	cerr := l.f.Close()
	l.f = nil
	if err != nil && !errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("blockrec: LOOP_CLR_FD %s: %w", l.Path, err)
	}
	if cerr != nil {
		return fmt.Errorf("blockrec: closing %s: %w", l.Path, cerr)
	}
	return nil
}

// loopBackingFile reports the backing file of loop device n, or "" if it
// is not bound.
func loopBackingFile(n int) string {
	b, err := os.ReadFile(fmt.Sprintf("/sys/block/loop%d/loop/backing_file", n))
	if err != nil {
		return ""
	}
	return string(trimNL(b))
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
