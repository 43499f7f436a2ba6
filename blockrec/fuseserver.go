package blockrec

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// backend is what a served file reads from and writes to: the recording
// image, or a crash-image view.
type backend interface {
	readAt(p []byte, off int64)
	writeAt(p []byte, off int64)
	// flush is called for every FUSE FSYNC. The loop driver turns a
	// REQ_OP_FLUSH (a REQ_PREFLUSH barrier split off by the block layer's
	// flush machinery) into vfs_fsync(backing, 0), which FUSE sends as
	// FSYNC with FsyncFlags 0. The loop queue advertises a volatile write
	// cache but no FUA, so the block layer also turns a REQ_FUA write into
	// write + flush: both barrier kinds arrive here, as FSYNC, after the
	// writes they order. TestRecorderRealPrograms checks this on the
	// running kernel.
	flush(datasync bool)
}

// servedFile is one regular file in the FUSE mount. The backend is swapped
// atomically so a pooled loop device can serve a new crash image without
// being re-attached.
type servedFile struct {
	name string
	size int64
	// cached lets the kernel keep the file's pages between opens and
	// reads; whoever swaps the backend must then invalidate the pages
	// that differ (fuseServer.invalidate). Only crash views are cached:
	// the recording image must see every request as it happens.
	cached bool
	be     atomic.Pointer[backend]
}

func (f *servedFile) set(b backend) { f.be.Store(&b) }

func (f *servedFile) get() backend {
	p := f.be.Load()
	if p == nil {
		return nil
	}
	return *p
}

// fuseServer serves a flat directory of fixed-size files. It speaks the raw
// protocol because it needs only a handful of opcodes and no inode
// bookkeeping: node 1 is the root and node 2+i is files[i].
type fuseServer struct {
	fuse.RawFileSystem
	files []*servedFile
	dir   string
	srv   *fuse.Server
	done  chan struct{}
}

const rootNode = 1

// startFUSE mounts a server for files at dir (created if needed). The mount
// is made directly by this root process, so no fusermount is involved.
func startFUSE(dir string, files []*servedFile) (*fuseServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("blockrec: creating FUSE mount point: %w", err)
	}
	fs := &fuseServer{RawFileSystem: fuse.NewDefaultRawFileSystem(), files: files, dir: dir, done: make(chan struct{})}
	opts := &fuse.MountOptions{
		AllowOther:        true,
		DirectMount:       true,
		DirectMountStrict: true,
		FsName:            "faultline",
		Name:              "faultline",
		// 1 MiB requests keep big loop writes in one FUSE WRITE, so one
		// logged entry matches one block-layer request where possible.
		MaxWrite:             1 << 20,
		MaxBackground:        64,
		DisableXAttrs:        true,
		DisableSplice:        true,
		MaxReadAhead:         128 << 10,
		IgnoreSecurityLabels: true,
	}
	// go-fuse opens /dev/fuse without O_CLOEXEC and sets the flag after
	// mounting; a program forked meanwhile by another goroutine (a traced
	// run of a parallel check) would inherit the descriptor, hold the FUSE
	// connection open and see its own descriptors numbered differently
	// from the recording. Forks take ForkLock for writing, so holding it
	// for reading closes the window, as the syscall package does for its
	// own non-atomic descriptor creation. WaitMount is inside the lock
	// too: its "poll hack" opens a file on the mount without O_CLOEXEC.
	syscall.ForkLock.RLock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			syscall.ForkLock.RUnlock()
		}
	}
	defer unlock()
	srv, err := fuse.NewServer(fs, dir, opts)
	closeOnExecFUSE()
	if err != nil {
		return nil, fmt.Errorf("blockrec: mounting FUSE at %s: %w", dir, err)
	}
	fs.srv = srv
	go func() {
		srv.Serve()
		close(fs.done)
	}()
	err = srv.WaitMount()
	unlock()
	if err != nil {
		_ = srv.Unmount()
		return nil, fmt.Errorf("blockrec: waiting for FUSE mount at %s: %w", dir, err)
	}
	return fs, nil
}

func (fs *fuseServer) path(i int) string { return filepath.Join(fs.dir, fs.files[i].name) }

// Close unmounts the FUSE file system. Everything using the files (loop
// devices) must be gone first, or the unmount fails with EBUSY; we then
// fall back to a lazy unmount so the process can still exit cleanly.
func (fs *fuseServer) Close() error {
	if fs == nil || fs.srv == nil {
		return nil
	}
	err := fs.srv.Unmount()
	if err != nil {
		if derr := syscall.Unmount(fs.dir, syscall.MNT_DETACH); derr == nil {
			err = nil
		}
	}
	select {
	case <-fs.done:
	case <-time.After(5 * time.Second):
	}
	fs.srv = nil
	if err != nil {
		return fmt.Errorf("blockrec: unmounting FUSE at %s: %w", fs.dir, err)
	}
	return nil
}

// invalidate drops the kernel's cached pages of files[i] in [off, off+n).
// It must not be called while the file is being read through: the kernel
// waits for locked pages, and their reads may need this server.
func (fs *fuseServer) invalidate(i int, off, n int64) error {
	st := fs.srv.InodeNotify(uint64(i+2), off, n)
	if !st.Ok() && st != fuse.ENOENT {
		return fmt.Errorf("blockrec: invalidating %s [%d,+%d): %w", fs.files[i].name, off, n, syscall.Errno(st))
	}
	return nil
}

func (fs *fuseServer) String() string { return "faultline" }

func (fs *fuseServer) file(node uint64) *servedFile {
	i := int(node) - 2
	if i < 0 || i >= len(fs.files) {
		return nil
	}
	return fs.files[i]
}

const attrTTL = 3600 // seconds; sizes never change while mounted

func (fs *fuseServer) fill(node uint64, a *fuse.Attr) bool {
	a.Ino = node
	a.Nlink = 1
	if node == rootNode {
		a.Mode = syscall.S_IFDIR | 0o700
		a.Nlink = 2
		return true
	}
	f := fs.file(node)
	if f == nil {
		return false
	}
	a.Mode = syscall.S_IFREG | 0o600
	a.Size = uint64(f.size)
	a.Blocks = uint64(f.size / 512)
	a.Blksize = 4096
	return true
}

func (fs *fuseServer) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if h.NodeId != rootNode {
		return fuse.ENOTDIR
	}
	for i, f := range fs.files {
		if f.name == name {
			out.NodeId = uint64(i + 2)
			out.EntryValid = attrTTL
			out.AttrValid = attrTTL
			fs.fill(out.NodeId, &out.Attr)
			return fuse.OK
		}
	}
	return fuse.ENOENT
}

func (fs *fuseServer) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if !fs.fill(in.NodeId, &out.Attr) {
		return fuse.ENOENT
	}
	out.AttrValid = attrTTL
	return fuse.OK
}

func (fs *fuseServer) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f := fs.file(in.NodeId)
	if f == nil {
		return fuse.EISDIR
	}
	// Direct I/O: no page cache between the loop device and the image, so
	// every block write reaches us as it happens and every read sees the
	// backend currently swapped in.
	out.OpenFlags = fuse.FOPEN_DIRECT_IO | fuse.FOPEN_PARALLEL_DIRECT_WRITES
	if f.cached {
		// Crash images share most of their blocks; a round trip to this
		// process costs tens of microseconds, a page-cache hit nothing.
		// Writes still come through (FUSE without writeback caching
		// writes through), so the scratch overlay sees them.
		out.OpenFlags = fuse.FOPEN_KEEP_CACHE
	}
	out.Fh = in.NodeId
	return fuse.OK
}

func (fs *fuseServer) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.NodeId != rootNode {
		return fuse.ENOTDIR
	}
	return fuse.OK
}

func (fs *fuseServer) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	for i := int(in.Offset); i < len(fs.files); i++ {
		if !out.AddDirEntry(fuse.DirEntry{Name: fs.files[i].name, Mode: syscall.S_IFREG, Ino: uint64(i + 2), Off: uint64(i + 1)}) {
			break
		}
	}
	return fuse.OK
}

func (fs *fuseServer) ReleaseDir(in *fuse.ReleaseIn) {}

func (fs *fuseServer) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	f := fs.file(in.NodeId)
	if f == nil {
		return nil, fuse.EISDIR
	}
	off := int64(in.Offset)
	if off >= f.size {
		return fuse.ReadResultData(nil), fuse.OK
	}
	n := min(int64(in.Size), f.size-off, int64(len(buf)))
	b := f.get()
	if b == nil {
		return nil, fuse.EIO
	}
	b.readAt(buf[:n], off)
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

func (fs *fuseServer) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	f := fs.file(in.NodeId)
	if f == nil {
		return 0, fuse.EISDIR
	}
	off := int64(in.Offset)
	if off+int64(len(data)) > f.size {
		return 0, fuse.Status(syscall.ENOSPC)
	}
	b := f.get()
	if b == nil {
		return 0, fuse.EIO
	}
	b.writeAt(data, off)
	return uint32(len(data)), fuse.OK
}

func (fs *fuseServer) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	f := fs.file(in.NodeId)
	if f == nil {
		return fuse.OK
	}
	if b := f.get(); b != nil {
		b.flush(in.FsyncFlags&1 != 0)
	}
	return fuse.OK
}

// Flush is close(2) of a descriptor, not a barrier: nothing to record.
func (fs *fuseServer) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status { return fuse.OK }

func (fs *fuseServer) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {}

func (fs *fuseServer) StatFs(cancel <-chan struct{}, in *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	out.Bsize = 4096
	out.NameLen = 255
	return fuse.OK
}
