package anomalies

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var _ = family(func() {
	register(&Anomaly{
		Name:    "rename-exdev",
		Summary: "rename fails with EXDEV: source and destination are on different file systems",
		Situation: "rename(2) only moves a directory entry within one file system. When the destination " +
			"is on another mount (a tmpfs /tmp, a bind mount, a container volume, an NFS home) it fails " +
			"with EXDEV and the program must move the file itself: copy the data, carry over mode, owner, " +
			"timestamps and extended attributes, make the copy durable, and only then remove the source. " +
			"CrashSimulator found Python's shutil getting this wrong; GNU mv is the reference.",
		Touches:  renames,
		Expected: "Fall back to copy-and-delete the way GNU mv does, or report the error and leave the source in place.",
		Mutation: failure("EXDEV", renames, "a successful rename, renameat or renameat2", userCall),
		Checks: []Check{{
			Name: "exdev-fallback",
			Doc: "after a rename fails with EXDEV, the destination is created and gets all the source's bytes, " +
				"its mode, owner, timestamps and extended attributes, and the source is removed only after the " +
				"copy is complete (closed or synced); removing it before an fsync of the copy is a note",
			Run: checkExdevFallback,
		}},
	})
})

// checkExdevFallback judges what a program did after each rename that
// failed with EXDEV. GNU mv (coreutils copy.c) is the reference: it
// creates the destination, copies with copy_file_range or read/write,
// sets the timestamps with futimens, copies xattrs (flistxattr/fsetxattr)
// and the mode as an ACL (fsetxattr system.posix_acl_access) or fchmod,
// fchowns when the owner differs, closes, and unlinks the source.
func checkExdevFallback(lines []*parser.Line) []Finding {
	t := &mutators.Trace{Lines: lines}
	calls, err := t.Calls()
	if err != nil {
		return []Finding{{Severity: Fail, Message: fmt.Sprintf("the replayed trace cannot be read: %v", err)}}
	}
	var out []Finding
	for _, c := range calls {
		if has(renames, c.Name) && c.Result != nil && c.Result.Outcome.Errno == "EXDEV" {
			out = append(out, judgeFallback(calls, c)...)
		}
	}
	return out
}

// move is what the program did with one source and destination.
type move struct {
	src, dst string
	srcStat  *parser.Struct // the last stat of the source before the copy
	created  *mutators.Call // the open that created the destination
	copied   int64          // bytes written to the destination
	cloned   bool           // FICLONE: the whole file
	lastData int            // Seq of the last write to the destination
	closed   int            // Seq of the destination's close after the data, -1 if none
	synced   int            // Seq of an fsync of the copy (or a sync), -1 if none
	mode     bool
	owner    bool
	dstOwner *parser.Struct // a stat of the destination
	times    bool
	listed   bool            // the source's xattrs were listed
	names    []string        // the source's xattr names
	set      map[string]bool // xattrs set on the destination
	removed  *mutators.Call  // the unlink of the source
}

func judgeFallback(calls []*mutators.Call, rn *mutators.Call) []Finding {
	_, paths := rn.PathArgs()
	if len(paths) < 2 {
		return []Finding{{Severity: Fail, Line: lineOf(rn), Message: "cannot tell the source and destination of this rename"}}
	}
	m := &move{src: paths[0], dst: paths[1], lastData: -1, closed: -1, synced: -1, set: map[string]bool{}}
	fds := fdTable{}
	for _, c := range calls[:rn.Seq] {
		fds.track(c)
		if has(stats, c.Name) && c.Succeeded() && has(fds.targets(c), m.src) {
			m.srcStat = mutators.StatStruct(c.Args)
		}
	}
	for _, c := range calls[rn.Seq+1:] {
		// Observe before tracking: a close must still see the path its fd
		// named when the trace has no -y decorations.
		if c.Succeeded() {
			m.observe(fds, c)
		}
		fds.track(c)
	}
	return m.judge(rn)
}

func (m *move) observe(fds fdTable, c *mutators.Call) {
	tg := fds.targets(c)
	onDst, onSrc := has(tg, m.dst), has(tg, m.src)
	switch {
	case has(opens, c.Name) && onDst && m.created == nil:
		fl := mutators.OpenFlags(c)
		if c.Name == "creat" || fl.HasFlag("O_CREAT") || fl.HasFlag("O_WRONLY") || fl.HasFlag("O_RDWR") {
			m.created = c
		}
	case has(stats, c.Name) && onSrc && m.lastData < 0:
		m.srcStat = mutators.StatStruct(c.Args)
	case has(stats, c.Name) && onDst:
		m.dstOwner = mutators.StatStruct(c.Args)
	case c.Name == "ioctl" && onDst && len(c.Args) > 1 && strings.Contains(mutators.ArgText(c.Args[1]), "FICLONE"):
		m.cloned, m.lastData = true, c.Seq
	case c.Name == "fsync" || c.Name == "fdatasync":
		if onDst && m.lastData >= 0 && m.removed == nil {
			m.synced = c.Seq
		}
	case c.Name == "sync" || c.Name == "syncfs":
		if m.lastData >= 0 && m.removed == nil {
			m.synced = c.Seq
		}
	case c.Name == "close" && onDst:
		if m.lastData >= 0 && m.removed == nil {
			m.closed = c.Seq
		}
	case has([]string{"fchmod", "chmod", "fchmodat", "fchmodat2"}, c.Name) && onDst:
		m.mode = true
	case has([]string{"fchown", "chown", "lchown", "fchownat"}, c.Name) && onDst:
		m.owner = true
	case has([]string{"utimensat", "futimesat", "utimes", "utime"}, c.Name) && onDst:
		m.times = true
	case has([]string{"flistxattr", "listxattr", "llistxattr"}, c.Name) && onSrc:
		m.listed = true
		if s, ok := c.StrArg(1); ok && s != "" {
			for _, n := range strings.Split(strings.TrimRight(s, "\x00"), "\x00") {
				if !has(m.names, n) {
					m.names = append(m.names, n)
				}
			}
		}
	case has([]string{"fsetxattr", "setxattr", "lsetxattr"}, c.Name) && onDst:
		if n, ok := c.StrArg(1); ok {
			m.set[n] = true
			if n == "system.posix_acl_access" {
				m.mode = true // the mode travels as the ACL's base entries
			}
		}
	case has(unlinks, c.Name) && onSrc && m.removed == nil:
		m.removed = c
	}
	if w, ok := mutators.WrittenFD(c); ok && c.Name != "ftruncate" && c.Name != "fallocate" {
		if fds.path(c, w, writtenArg(c.Name)) == m.dst {
			if n, ok := c.Result.Int(); ok {
				m.copied += n
			}
			m.lastData = c.Seq
		}
	}
}

func writtenArg(name string) int {
	if name == "copy_file_range" || name == "splice" {
		return 2
	}
	return 0
}

func (m *move) judge(rn *mutators.Call) []Finding {
	var out []Finding
	at := lineOf(rn)
	fail := func(line int, format string, a ...any) {
		out = append(out, Finding{Severity: Fail, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	if m.created == nil {
		fail(at, "after rename(%q, %q) failed with EXDEV the destination was never created: the data was not copied", m.src, m.dst)
		if m.removed != nil {
			fail(lineOf(m.removed), "the source %s was removed without a copy: data lost", m.src)
		}
		return out
	}
	size, sizeKnown := int64(0), false
	if m.srcStat != nil {
		size, sizeKnown = mutators.FieldInt(m.srcStat, "st_size")
	}
	switch {
	case m.cloned:
	case m.lastData < 0 && !(sizeKnown && size == 0):
		fail(lineOf(m.created), "no data was written to %s", m.dst)
	case sizeKnown && m.copied < size:
		fail(lineOf(m.created), "only %d of the source's %d bytes were written to %s", m.copied, size, m.dst)
	}
	if !m.mode {
		fail(at, "the mode was not carried over: no chmod-family call or ACL on %s", m.dst)
	}
	if !m.owner {
		switch m.sameOwner() {
		case ownerDiffers:
			fail(at, "the owner was not carried over: no chown-family call on %s, and its stat shows another owner than the source's", m.dst)
		case ownerUnknown:
			// GNU mv skips fchown when the new file already has the
			// source's owner, which only full stats (record -v) show.
			out = append(out, Finding{Severity: Note, Line: at, Message: fmt.Sprintf(
				"cannot tell whether the owner was carried over: no chown-family call on %s and the trace's stats do not show st_uid (record with -v)", m.dst)})
		}
	}
	if !m.times {
		fail(at, "the timestamps were not carried over: no utimensat/futimens/utimes on %s", m.dst)
	}
	switch {
	case !m.listed:
		fail(at, "the extended attributes were not carried over: the source's were never listed (listxattr/flistxattr)")
	default:
		var missing []string
		for _, n := range m.names {
			if !m.set[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			fail(at, "extended attributes not carried over to %s: %s", m.dst, strings.Join(missing, ", "))
		}
	}
	switch {
	case m.removed == nil:
		fail(at, "the source %s was never removed: the move left two copies", m.src)
	case m.removed.Seq < m.lastData || m.closed < m.lastData && m.synced < m.lastData:
		fail(lineOf(m.removed), "the source %s was removed before the copy was complete", m.src)
	case m.synced < m.lastData:
		out = append(out, Finding{Severity: Note, Line: lineOf(m.removed), Message: fmt.Sprintf(
			"the source %s was removed before the copy was made durable (no fsync of %s): a crash after the unlink can lose the data (GNU mv does the same)", m.src, m.dst)})
	}
	return out
}

type ownership int

const (
	ownerSame ownership = iota
	ownerDiffers
	ownerUnknown
)

// sameOwner compares the source's owner with a stat of the destination
// taken after it was created.
func (m *move) sameOwner() ownership {
	if m.srcStat == nil || m.dstOwner == nil {
		return ownerUnknown
	}
	su, okSU := mutators.FieldInt(m.srcStat, "st_uid")
	sg, okSG := mutators.FieldInt(m.srcStat, "st_gid")
	du, okU := mutators.FieldInt(m.dstOwner, "st_uid")
	dg, okG := mutators.FieldInt(m.dstOwner, "st_gid")
	switch {
	case !okSU || !okSG || !okU || !okG:
		return ownerUnknown
	case su == du && sg == dg:
		return ownerSame
	}
	return ownerDiffers
}
