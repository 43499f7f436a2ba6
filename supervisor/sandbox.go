package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/faultline/faultline/blockrec"
	"golang.org/x/sys/unix"
)

// Sandbox is the world a program runs in: a fresh file system, mounted in
// faultline's namespace at a private host path below blockrec.RunRoot and
// shown to the program, in a private mount namespace, at Dir: the same
// path on every run. Configure the exported fields, Open, run programs
// (Run, Replay), Close.
type Sandbox struct {
	// Dir is where the program sees the sandbox; it is its working
	// directory. Absolute; created (on the host file system) if missing.
	Dir string
	// Init is a directory whose contents are copied in, preserving mode,
	// owner, timestamps, xattrs and symlinks.
	Init string
	// Setup is a shell command run as root with sh -c in the sandbox (in
	// Dir, in the private namespace) after Init is copied.
	Setup string
	// User runs the program (not Setup) as this user.
	User string
	// FS is "tmpfs" (or "") for a RAM file system, or "ext4", "xfs",
	// "btrfs" for the recording RAM disk (blockrec.Recorder), whose block
	// log the crash check reads.
	FS string
	// Size of the file system in bytes; 0 means 256 MiB for tmpfs and
	// blockrec's default for the disk.
	Size int64
	// Umask is the program's umask; -1 (or unset via NewSandbox) leaves
	// faultline's.
	Umask int
	// SetupOutput receives Setup's stdout and stderr; nil discards them.
	SetupOutput io.Writer

	mu      sync.Mutex
	opened  bool
	closed  bool
	host    string
	rec     *blockrec.Recorder
	cred    *syscall.Credential
	dirHold *dirLock // the shared hold on Dir (sharedir.go)
	mounted bool     // tmpfs mounted at host
}

// NewSandbox is a tmpfs sandbox at dir with faultline's umask.
func NewSandbox(dir string) *Sandbox { return &Sandbox{Dir: dir, Umask: -1} }

var sandboxCounter atomic.Int64

// live sandboxes, for CloseAll.
var liveSandboxes = struct {
	sync.Mutex
	m map[*Sandbox]struct{}
}{m: map[*Sandbox]struct{}{}}

// CloseAll closes every open Sandbox of this process (and with them
// their recorders); a signal handler or a deferred recover calls it.
func CloseAll() error {
	liveSandboxes.Lock()
	var ss []*Sandbox
	for s := range liveSandboxes.m {
		ss = append(ss, s)
	}
	liveSandboxes.Unlock()
	var errs []error
	for _, s := range ss {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func (s *Sandbox) fsName() string {
	if s.FS == "" {
		return "tmpfs"
	}
	return s.FS
}

// Open removes what killed runs left behind, mounts the file system and
// populates it from Init and Setup. On error everything is released.
func (s *Sandbox) Open(ctx context.Context) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened {
		return errors.New("supervisor: sandbox opened twice")
	}
	s.opened = true
	if s.Dir == "" || !filepath.IsAbs(s.Dir) {
		return fmt.Errorf("sandbox: directory %q must be an absolute path", s.Dir)
	}
	s.Dir = filepath.Clean(s.Dir)
	if s.Dir == "/" {
		return errors.New("sandbox: cannot mount over /")
	}
	if s.Init != "" {
		st, err := os.Stat(s.Init)
		if err != nil {
			return fmt.Errorf("sandbox: --init: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("sandbox: --init %s: not a directory", s.Init)
		}
	}
	if s.User != "" {
		if s.cred, err = lookupUser(s.User); err != nil {
			return fmt.Errorf("sandbox: --user %s: %w", s.User, err)
		}
	}
	if _, err := blockrec.CleanupStale(); err != nil {
		return fmt.Errorf("sandbox: removing what an earlier run left: %w", err)
	}
	liveSandboxes.Lock()
	liveSandboxes.m[s] = struct{}{}
	liveSandboxes.Unlock()
	defer func() {
		if err != nil {
			s.mu.Unlock()
			s.Close()
			s.mu.Lock()
		}
	}()
	switch s.fsName() {
	case "tmpfs":
		// Made under blockrec's runtime-dir lock: no other object's
		// Close can take the runtime dir for idle and remove it here.
		if s.host, err = blockrec.NewObjectDir("sandbox"); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		size := s.Size
		if size <= 0 {
			size = 256 << 20
		}
		if err := unix.Mount("faultline-sandbox", s.host, "tmpfs", unix.MS_NOSUID, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
			return fmt.Errorf("sandbox: mount tmpfs on %s: %w", s.host, err)
		}
		s.mounted = true
	default:
		rt, err := blockrec.RuntimeDir()
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		s.host = filepath.Join(rt, "sandbox-"+strconv.FormatInt(sandboxCounter.Add(1), 10))
		s.rec = &blockrec.Recorder{Dir: s.host, FS: blockrec.FSType(s.FS), Size: s.Size}
		if err := s.rec.Start(); err != nil {
			s.rec = nil
			return fmt.Errorf("sandbox: recording RAM disk (%s): %w", s.FS, err)
		}
		// mkfs made it; no program did.
		os.Remove(filepath.Join(s.host, "lost+found"))
	}
	if s.dirHold, err = holdDir(s.Dir); err != nil {
		return err
	}
	if s.Init != "" {
		if err := copyTree(s.Init, s.host); err != nil {
			return fmt.Errorf("sandbox: copying --init %s: %w", s.Init, err)
		}
	} else if s.cred != nil {
		if err := os.Chown(s.host, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	if s.Setup != "" {
		if err := s.runSetup(ctx); err != nil {
			return err
		}
	}
	return nil
}

// HostDir is where faultline itself sees the sandbox's file system, to
// walk it while the program is paused.
func (s *Sandbox) HostDir() string { return s.host }

// Recorder is the recording RAM disk behind the sandbox, nil for tmpfs.
// Run and Replay call its StartLogging right before the program starts
// and Unmount when it has ended (the log still recording); the caller
// reads Log() afterwards. Close closes it.
func (s *Sandbox) Recorder() *blockrec.Recorder { return s.rec }

// Credential is the --user's identity, nil to run as faultline.
func (s *Sandbox) Credential() *syscall.Credential { return s.cred }

// Enter, on a locked OS thread that will never serve another goroutine,
// gives that thread a private mount namespace in which the sandbox is
// mounted at Dir, and sets the umask; children forked from the thread
// inherit both. It is tracer.Cmd.Prepare.
func (s *Sandbox) Enter() error {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
		return fmt.Errorf("sandbox: unshare mount namespace: %w", err)
	}
	// Nothing mounted in here may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: make / private: %w", err)
	}
	if err := unix.Mount(s.host, s.Dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("sandbox: bind %s on %s: %w", s.host, s.Dir, err)
	}
	// Other runs' disks came along with the copy of the host's mounts;
	// holding them would keep those runs from closing their disks.
	if err := blockrec.DetachForeign(s.Dir, s.host); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if err := unix.Chdir(s.Dir); err != nil {
		return fmt.Errorf("sandbox: chdir %s: %w", s.Dir, err)
	}
	if s.Umask >= 0 {
		unix.Umask(s.Umask)
	}
	return nil
}

// Leave undoes Enter's bind mount in the thread's namespace, so the
// host-side unmount releases the file system. It is tracer.Cmd.Release.
func (s *Sandbox) Leave() {
	unix.Chdir("/")
	unix.Unmount(s.Dir, unix.MNT_DETACH)
}

// inNamespace runs fn on a fresh locked thread inside the sandbox's
// namespace; the thread is discarded afterwards.
func (s *Sandbox) inNamespace(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread's namespace is not the process's.
		if err := s.Enter(); err != nil {
			done <- err
			return
		}
		err := fn()
		s.Leave()
		done <- err
	}()
	return <-done
}

// runSetup runs --setup with sh -c in the sandbox, as root.
func (s *Sandbox) runSetup(ctx context.Context) error {
	var out io.Writer = io.Discard
	if s.SetupOutput != nil {
		out = s.SetupOutput
	}
	var tail limitedBuffer
	return s.inNamespace(func() error {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", s.Setup)
		cmd.Dir = s.Dir
		cmd.Stdout = io.MultiWriter(out, &tail)
		cmd.Stderr = io.MultiWriter(out, &tail)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("sandbox: --setup %q: %w%s", s.Setup, err, tail.suffix())
		}
		return nil
	})
}

// Finish is called when the program has ended: with the recording RAM
// disk, the sandbox is synced and unmounted while the log still records,
// so what the program left in the page cache reaches the log.
func (s *Sandbox) Finish() error {
	if s.rec == nil {
		return nil
	}
	if err := s.rec.Unmount(); err != nil {
		return fmt.Errorf("sandbox: unmount recording disk: %w", err)
	}
	return nil
}

// Close releases everything Open took; it may be called more than once
// and after a failed Open.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	liveSandboxes.Lock()
	delete(liveSandboxes.m, s)
	liveSandboxes.Unlock()
	var errs []error
	if s.rec != nil {
		if err := s.rec.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: %w", err))
		}
	}
	if s.mounted {
		if err := unix.Unmount(s.host, 0); err != nil {
			if err2 := unix.Unmount(s.host, unix.MNT_DETACH); err2 != nil {
				errs = append(errs, fmt.Errorf("sandbox: unmount %s: %w", s.host, err))
			}
		}
		s.mounted = false
	}
	if s.host != "" {
		if err := os.Remove(s.host); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("sandbox: %w", err))
		}
	}
	s.dirHold.release()
	removeIdleRuntimeDir()
	return errors.Join(errs...)
}

// removeIdleRuntimeDir lets blockrec remove /run/faultline/<pid> once no
// sandbox of this process is open and nothing else is left in it.
func removeIdleRuntimeDir() {
	liveSandboxes.Lock()
	n := len(liveSandboxes.m)
	liveSandboxes.Unlock()
	if n == 0 {
		blockrec.ReleaseRuntimeDir()
	}
}

func lookupUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if n, nerr := strconv.Atoi(name); nerr == nil {
			u, err = user.LookupId(strconv.Itoa(n))
		}
		if err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if gs, err := u.GroupIds(); err == nil {
		for _, g := range gs {
			if n, err := strconv.Atoi(g); err == nil {
				c.Groups = append(c.Groups, uint32(n))
			}
		}
	}
	return c, nil
}

// limitedBuffer keeps the last bytes written, for error messages.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 2048 {
		l.b = l.b[len(l.b)-2048:]
	}
	return len(p), nil
}

func (l *limitedBuffer) suffix() string {
	if len(l.b) == 0 {
		return ""
	}
	return ": " + string(trimNL(l.b))
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
