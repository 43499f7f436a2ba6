package crash

import (
	"path"
	"strings"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// metadataCalls are the calls after which a developer expects the files to
// be in a state worth keeping (C³ section 3.3, DESIGN.md "The generic
// oracle"): directory operations, fsync-family calls and the close of a
// written file (decided separately, it needs the descriptor's history).
var metadataCalls = map[string]bool{
	"mkdir": true, "mkdirat": true, "rmdir": true,
	"fsync": true, "fdatasync": true, "sync": true, "syncfs": true, "sync_file_range": true,
	"link": true, "linkat": true, "symlink": true, "symlinkat": true,
	"unlink": true, "unlinkat": true,
	"rename": true, "renameat": true, "renameat2": true,
}

// writtenFDArg is the descriptor argument a write-family call writes to.
var writtenFDArg = map[string]int{
	"write": 0, "pwrite64": 0, "writev": 0, "pwritev": 0, "pwritev2": 0,
	"ftruncate": 0, "fallocate": 0, "sendfile": 0, "copy_file_range": 2, "splice": 2,
}

// fdKey names a descriptor of a process.
type fdKey struct {
	tgid int
	fd   int64
}

// metaTracker follows a run call by call and says after which calls the
// sandbox must be snapshotted (and, for kill points, before which).
type metaTracker struct {
	sandbox string
	written map[fdKey]bool
}

func newMetaTracker(sandbox string) *metaTracker {
	return &metaTracker{sandbox: path.Clean(sandbox), written: map[fdKey]bool{}}
}

// inSandbox reports whether an absolute path lies in the sandbox; a
// relative one is taken to (the program starts there and faultline does
// not follow chdir).
func (m *metaTracker) inSandbox(p string) bool {
	if !path.IsAbs(p) {
		return true
	}
	p = path.Clean(p)
	return p == m.sandbox || strings.HasPrefix(p, m.sandbox+"/")
}

// touches reports whether any path the call names is in the sandbox.
func (m *metaTracker) touches(c *mutators.Call) bool {
	for _, p := range c.Paths() {
		if m.inSandbox(p) {
			return true
		}
	}
	return false
}

// isMetadata reports whether a completed call is a metadata call that
// touched the sandbox, updating the written-descriptor state as it goes.
// It must see every completed call of the run, in order.
func (m *metaTracker) isMetadata(tgid int, sc *parser.Syscall) bool {
	c := &mutators.Call{Syscall: sc, Cwd: m.sandbox}
	ok := c.Succeeded()
	if i, isWrite := writtenFDArg[sc.Name]; isWrite {
		if fd, has := c.IntArg(i); has && ok {
			m.written[fdKey{tgid, fd}] = true
		}
		return false
	}
	switch sc.Name {
	case "close":
		fd, decor, has := c.FD()
		if !has {
			return false
		}
		k := fdKey{tgid, fd}
		was := m.written[k]
		delete(m.written, k)
		return ok && was && (decor == "" || m.inSandbox(decor))
	case "open", "openat", "openat2", "creat", "dup", "dup2", "dup3":
		// A new descriptor starts unwritten.
		if r, has := c.ResultInt(); has && ok {
			delete(m.written, fdKey{tgid, r})
		}
		return false
	case "sync":
		return ok
	}
	return ok && metadataCalls[sc.Name] && m.touches(c)
}

// isMetadataEntry reports whether a call about to be made is one of the
// metadata calls, judged on its arguments alone (for kill points, which
// strike before the call runs).
func (m *metaTracker) isMetadataEntry(tgid int, sc *parser.Syscall) bool {
	c := &mutators.Call{Syscall: sc, Cwd: m.sandbox}
	switch sc.Name {
	case "close":
		fd, decor, has := c.FD()
		return has && m.written[fdKey{tgid, fd}] && (decor == "" || m.inSandbox(decor))
	case "sync":
		return true
	}
	return metadataCalls[sc.Name] && m.touches(c)
}
