package mutators

import (
	"fmt"
	"path"
	"strings"

	"github.com/faultline/faultline/parser"
)

// Test amplification (DESIGN.md, "The generic oracle"): inserted calls that
// do not change what the program sees but change what a crash leaves.

// SyncPoints inserts "sync()" after each call that may silently erase data
// (open with O_TRUNC, creat, truncate, ftruncate), so the truncation and the
// data written before it reach the disk in separate epochs; this breaks the
// accidental atomicity that hides `sort data -o data` on small inputs. With
// wide, also after any open for writing, unlink, and writes of more than
// 512 bytes, as C³'s own code does.
func SyncPoints(wide bool) *Mutation {
	name := "sync-points"
	if wide {
		name = "sync-points-wide"
	}
	return &Mutation{
		Name:  name,
		Wants: "a successful open with O_TRUNC, creat, truncate or ftruncate",
		Match: func(s *Site) bool {
			for _, p := range s.Call.Paths() {
				if pseudo(p) {
					return false
				}
			}
			return s.Call.Succeeded() && syncPoint(s.Call, wide)
		},
		Edit: func(s *Site) error {
			s.Insert("sync point after "+s.Call.Name, SyncCall())
			return nil
		},
	}
}

func syncPoint(c *Call, wide bool) bool {
	switch c.Name {
	case "creat", "truncate", "ftruncate":
		return true
	case "open", "openat", "openat2":
		fl := openFlags(c)
		if fl.HasFlag("O_TRUNC") {
			return true
		}
		return wide && (fl.HasFlag("O_WRONLY") || fl.HasFlag("O_RDWR"))
	case "unlink", "unlinkat":
		return wide
	case "write", "pwrite64", "writev", "pwritev", "pwritev2":
		n, ok := c.Result.Int()
		return wide && ok && n > 512
	}
	return false
}

// openFlags is the flags argument of an open-family call.
func openFlags(c *Call) *parser.Expr {
	i := 1
	if c.Name == "openat" || c.Name == "openat2" {
		i = 2
	}
	if i >= len(c.Args) || c.Args[i].Value == nil {
		return nil
	}
	if c.Name == "openat2" { // {flags=..., mode=..., resolve=...}
		if st, ok := c.Args[i].Value.Head.(*parser.Struct); ok {
			if f := st.Field("flags"); f != nil {
				return f.Value
			}
		}
		return nil
	}
	return c.Args[i].Value
}

// OpenFlags is exported for the catalogue: the flags of an open-family call.
func OpenFlags(c *Call) *parser.Expr { return openFlags(c) }

// CommitPoints inserts, after each metadata call (a create, mkdir, rmdir,
// unlink, rename, link, symlink, mknod, and the close of a file the program
// wrote), an fsync of the directory that holds the file:
// "fsync(-1</dir>) = 0". A directory fsync commits the journal without
// writing back other files' delayed data, which is what ext4's 5-second
// commit timer does while data waits 30 s for write-back; doing it here
// makes that race deterministic (DESIGN.md, "Commit points").
func CommitPoints() *Mutation {
	return &Mutation{
		Name:  "commit-points",
		Wants: "a successful create, mkdir, rmdir, unlink, rename, link, symlink, mknod or close of a written file",
		Match: func(s *Site) bool { return s.Call.Succeeded() && len(commitDirs(s)) > 0 },
		Edit: func(s *Site) error {
			for _, d := range commitDirs(s) {
				s.Insert(fmt.Sprintf("commit point: fsync of directory %s after %s", d, s.Call.Name), DirFsyncCall(d))
			}
			return nil
		},
	}
}

// commitDirs are the directories whose entries the call changed, or, for
// the close of a written file, the directory holding it.
func commitDirs(s *Site) []string {
	c := s.Call
	var paths []string
	switch c.Name {
	case "open", "openat", "openat2":
		if openFlags(c).HasFlag("O_CREAT") {
			_, paths = c.PathArgs()
		}
	case "creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
		"renameat2", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat":
		_, paths = c.PathArgs()
	case "close":
		if p, ok := writtenFile(s); ok {
			paths = []string{p}
		}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, p := range paths {
		if pseudo(p) {
			continue
		}
		d := path.Dir(p)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// writtenFile reports whether the descriptor a close releases was written
// since it was opened, and the file's path. It looks back through the
// process's calls to the open that returned the descriptor. Descriptors
// inherited across fork or passed between threads are not followed.
func writtenFile(s *Site) (string, bool) {
	fd, p, ok := s.Call.FD()
	if !ok {
		return "", false
	}
	written := false
	s.Prev(func(c *Call) bool {
		if c.Pid != s.Call.Pid {
			return true
		}
		if w, ok := WrittenFD(c); ok && w == fd && c.Succeeded() {
			written = true
		}
		if r, ok := c.Result.Int(); ok && r == fd && c.Succeeded() && returnsFD(c.Name) {
			if p == "" {
				if _, rs := c.PathArgs(); len(rs) > 0 {
					p = rs[0]
				}
			}
			return false
		}
		return true
	})
	return p, written && p != ""
}

// WrittenFD is the descriptor a write-family call writes to: write,
// pwrite64, writev, pwritev, fallocate and ftruncate write their first
// argument, sendfile its first (out_fd), copy_file_range and splice their
// third (fd_out).
func WrittenFD(c *Call) (int64, bool) {
	i := 0
	switch c.Name {
	case "write", "pwrite64", "writev", "pwritev", "pwritev2", "sendfile", "fallocate", "ftruncate":
	case "copy_file_range", "splice":
		i = 2
	default:
		return 0, false
	}
	return c.IntArg(i)
}

func returnsFD(name string) bool {
	switch name {
	case "open", "openat", "openat2", "creat", "dup", "dup2", "dup3", "fcntl":
		return true
	}
	return false
}

// pseudo reports whether a path is on a kernel file system (/dev, /proc,
// /sys), where opening with O_CREAT creates nothing and nothing is
// written back: no commit point there.
func pseudo(p string) bool {
	for _, pre := range []string{"/dev/", "/proc/", "/sys/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
