package blockrec

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// NodeType is the kind of a snapshot entry.
type NodeType uint8

const (
	TypeFile NodeType = iota
	TypeDir
	TypeSymlink
	// TypeOther is a device, fifo or socket: recorded, never read.
	TypeOther
)

func (t NodeType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	}
	return "other"
}

// Node is one entry of a snapshot.
type Node struct {
	Path   string // relative, slash-separated; never "." (the root is implied)
	Type   NodeType
	Mode   fs.FileMode
	Size   int64       // bytes read for files, target length for symlinks
	SHA256 [32]byte    // files only
	Hist   [256]uint64 // files only: how often each byte value occurs
	Target string      // symlinks only
	Err    string      // why the entry could not be read completely, if it could not
}

// Snapshot is a walked directory tree, sorted by path.
type Snapshot struct {
	Nodes []Node
}

// Histogram sums the byte histograms of all files.
func (s *Snapshot) Histogram() [256]uint64 {
	var h [256]uint64
	for i := range s.Nodes {
		for b, c := range s.Nodes[i].Hist {
			h[b] += c
		}
	}
	return h
}

// Lookup returns the node at path, or nil.
func (s *Snapshot) Lookup(path string) *Node {
	i := sort.Search(len(s.Nodes), func(i int) bool { return s.Nodes[i].Path >= path })
	if i < len(s.Nodes) && s.Nodes[i].Path == path {
		return &s.Nodes[i]
	}
	return nil
}

var walkBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// Walk snapshots the tree under dir: every file with its size, SHA-256 and
// byte histogram, every directory and symlink. lost+found at the top is
// skipped: mkfs makes it, no program does. An unreadable entry, which is
// to be expected on a crash image, is recorded with Err instead of failing
// the walk; only an unreadable dir itself is an error.
//
// The walk runs once per crash site, so it works on directory descriptors
// with raw system calls: open, fstat, read, close per file and nothing
// else (no path lookups from the root, no lstat, no poller registration).
func Walk(dir string) (*Snapshot, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("blockrec: walking %s: %w", dir, err)
	}
	bp := walkBufs.Get().(*[]byte)
	defer walkBufs.Put(bp)
	w := &walker{buf: *bp, snap: &Snapshot{}}
	err = w.dir(fd, "")
	if err != nil {
		return nil, fmt.Errorf("blockrec: walking %s: %w", dir, err)
	}
	sort.Slice(w.snap.Nodes, func(i, j int) bool { return w.snap.Nodes[i].Path < w.snap.Nodes[j].Path })
	return w.snap, nil
}

type walker struct {
	buf  []byte
	snap *Snapshot
}

// dir lists the directory open at fd (and closes it) and records its
// entries under the relative path rel.
func (w *walker) dir(fd int, rel string) error {
	f := os.NewFile(uintptr(fd), rel)
	ents, err := f.ReadDir(-1)
	defer f.Close()
	if err != nil && len(ents) == 0 {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if rel == "" && name == "lost+found" {
			continue
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		w.entry(fd, name, r, e.Type())
	}
	return err
}

func (w *walker) entry(dirfd int, name, rel string, typ fs.FileMode) {
	n := Node{Path: rel}
	switch {
	case typ.IsRegular():
		n.Type = TypeFile
		if err := w.file(dirfd, name, &n); err != nil {
			n.Err = err.Error()
		}
		w.snap.Nodes = append(w.snap.Nodes, n)
	case typ.IsDir():
		n.Type = TypeDir
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			n.Err = err.Error()
			w.snap.Nodes = append(w.snap.Nodes, n)
			return
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil {
			n.Mode = fileMode(st.Mode)
		}
		w.snap.Nodes = append(w.snap.Nodes, n)
		i := len(w.snap.Nodes) - 1
		if err := w.dir(fd, rel); err != nil {
			w.snap.Nodes[i].Err = err.Error()
		}
	case typ&fs.ModeSymlink != 0:
		n.Type = TypeSymlink
		n.Mode = fs.ModeSymlink | 0o777
		b := w.buf[:4096]
		m, err := unix.Readlinkat(dirfd, name, b)
		if err != nil {
			n.Err = err.Error()
		} else {
			n.Target = string(b[:m])
			n.Size = int64(m)
		}
		w.snap.Nodes = append(w.snap.Nodes, n)
	default:
		// Unknown d_type (some file systems) or a special file: ask.
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			n.Type = TypeOther
			n.Err = err.Error()
			w.snap.Nodes = append(w.snap.Nodes, n)
			return
		}
		if m := fileMode(st.Mode); m.Type() != typ && (m.IsRegular() || m.IsDir() || m&fs.ModeSymlink != 0) {
			w.entry(dirfd, name, rel, m.Type())
			return
		}
		n.Type = TypeOther
		n.Mode = fileMode(st.Mode)
		w.snap.Nodes = append(w.snap.Nodes, n)
	}
}

// file reads a file once for both its hash and its histogram. The size
// recorded is what was read, which is what a user would get back.
func (w *walker) file(dirfd int, name string, n *Node) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOATIME, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	n.Mode = fileMode(st.Mode)
	h := sha256.New()
	defer func() { copy(n.SHA256[:], h.Sum(nil)) }()
	for {
		m, err := unix.Read(fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m == 0 {
			return nil
		}
		h.Write(w.buf[:m])
		histogram(&n.Hist, w.buf[:m])
		n.Size += int64(m)
		// A short read that reaches the size fstat reported is the end;
		// skipping the final zero-length read saves a system call per file.
		if n.Size == st.Size && m < len(w.buf) {
			return nil
		}
	}
}

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// histogram counts byte values with four tables so consecutive equal bytes
// do not serialise on one counter.
func histogram(h *[256]uint64, b []byte) {
	var c [4][256]uint64
	for len(b) >= 4 {
		c[0][b[0]]++
		c[1][b[1]]++
		c[2][b[2]]++
		c[3][b[3]]++
		b = b[4:]
	}
	for _, x := range b {
		c[0][x]++
	}
	for i := range h {
		h[i] += c[0][i] + c[1][i] + c[2][i] + c[3][i]
	}
}
