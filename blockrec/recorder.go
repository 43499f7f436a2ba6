package blockrec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Recorder is the recording RAM disk: configure the exported fields, call
// Start, populate the sandbox, StartLogging, run the program (calling
// SetPosition as it goes), Unmount, take the Log, Close.
//
// Like os/exec.Cmd, a Recorder is used once.
type Recorder struct {
	// Dir is the sandbox mount point; created if missing.
	Dir string
	// Size of the image in bytes; DefaultSize if zero.
	Size int64
	// FS is the file system to create; Ext4 if empty.
	FS FSType
	// MkfsArgs are appended to faultline's own mkfs options.
	MkfsArgs []string
	// MountFlags and MountData are passed to mount(2) for the sandbox.
	MountFlags uintptr
	MountData  string
	// DirectIO makes the loop device use direct I/O on the FUSE file. Off
	// by default: with it, the loop driver submits requests
	// asynchronously, which changes nothing about ordering guarantees but
	// makes the log's order among concurrently in-flight writes less
	// repeatable from run to run.
	DirectIO bool

	mu       sync.Mutex
	objDir   string
	img      *image
	fs       *fuseServer
	loop     *loopDev
	mounted  bool
	base     []byte
	startPos int64
	started  bool
	closed   bool
}

// Start creates the image, serves it, attaches it, runs mkfs and mounts it
// at Dir. Nothing is logged yet. On error everything made so far is
// released.
func (r *Recorder) Start() (err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("blockrec: Recorder.Start called twice")
	}
	r.started = true
	if r.Dir == "" {
		return errors.New("blockrec: Recorder.Dir is empty")
	}
	if r.Size == 0 {
		r.Size = DefaultSize
	}
	if r.Size%SectorSize != 0 || r.Size < 1<<20 {
		return fmt.Errorf("blockrec: image size %d must be a multiple of %d and at least 1 MiB", r.Size, SectorSize)
	}
	if r.FS == "" {
		r.FS = Ext4
	}
	if _, err := r.FS.mkfsCommand("/dev/null", nil); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			r.releaseLocked()
		}
	}()
	register(r)
	if r.objDir, err = newObjectDir("rec"); err != nil {
		return err
	}
	r.img = newImage(r.Size)
	f := &servedFile{name: "disk", size: r.Size}
	f.set(r.img)
	if r.fs, err = startFUSE(filepath.Join(r.objDir, "fuse"), []*servedFile{f}); err != nil {
		return err
	}
	if r.loop, err = attachLoop(loopConfig{backing: r.fs.path(0), directIO: r.DirectIO}); err != nil {
		return err
	}
	if err = r.FS.mkfs(r.loop.Path, r.MkfsArgs); err != nil {
		return err
	}
	if err = os.MkdirAll(r.Dir, 0o755); err != nil {
		return fmt.Errorf("blockrec: creating sandbox dir: %w", err)
	}
	if err = mountFS(r.loop.Path, r.Dir, r.FS, r.MountFlags, r.MountData); err != nil {
		return err
	}
	r.mounted = true
	return nil
}

// Device is the loop device the sandbox is mounted from.
func (r *Recorder) Device() string {
	if r.loop == nil {
		return ""
	}
	return r.loop.Path
}

// SetPosition sets the trace position that following requests are tagged
// with. It is safe to call from any goroutine.
func (r *Recorder) SetPosition(pos int64) {
	if r.img != nil {
		r.img.pos.Store(pos)
	}
}

// Position returns the current trace position.
func (r *Recorder) Position() int64 {
	if r.img == nil {
		return 0
	}
	return r.img.pos.Load()
}

// StartLogging syncs the sandbox so everything set up so far is in the base
// image, then records every request from now on.
func (r *Recorder) StartLogging() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.mounted {
		return errors.New("blockrec: StartLogging needs a started, mounted Recorder")
	}
	if err := syncfs(r.Dir); err != nil {
		return err
	}
	r.startPos = r.img.pos.Load()
	r.base = r.img.startLogging()
	return nil
}

// Unmount syncs and unmounts the sandbox while the log keeps recording, so
// whatever the program left in the page cache reaches the log, in the order
// the file system chooses, ending with the unmount's own flushes.
func (r *Recorder) Unmount() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.mounted {
		return nil
	}
	_ = syncfs(r.Dir)
	r.mounted = false
	return unmountFS(r.Dir)
}

// Log returns the log recorded so far. It shares write data with the
// recorder (entries are never modified), so it is cheap to call.
func (r *Recorder) Log() *Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := &Log{FS: r.FS, ImageSize: r.Size, StartPos: r.startPos, Base: r.base}
	if r.img != nil {
		l.Entries = r.img.snapshotEntries()
	}
	return l
}

// Close unmounts the sandbox if still mounted, detaches the loop device,
// unmounts the FUSE server and removes the runtime directory. It is safe to
// call more than once and after a failed Start.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.releaseLocked()
}

func (r *Recorder) releaseLocked() error {
	if r.closed {
		return nil
	}
	r.closed = true
	// Unregistered only once its directory is gone: until then another
	// object's Close must not take the runtime dir for idle and remove it
	// under this one.
	var errs []error
	if r.mounted {
		r.mounted = false
		if err := unmountFS(r.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	if r.img != nil {
		r.img.stopLogging()
	}
	if err := r.loop.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := r.fs.Close(); err != nil {
		errs = append(errs, err)
	}
	if r.objDir != "" {
		if err := removeObjectDir(r.objDir); err != nil {
			errs = append(errs, err)
		}
	}
	unregister(r)
	if err := removeRuntimeDirIfIdle(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func syncfs(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("blockrec: opening %s to sync: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("blockrec: syncfs %s: %w", dir, err)
	}
	return nil
}
