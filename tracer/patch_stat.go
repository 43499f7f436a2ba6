package tracer

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// The stat family: struct stat (stat, lstat, fstat, newfstatat) and
// struct statx, member by member as stat.go prints them.

// volatility says which PatchOptions switch a member belongs to.
type volatility int

const (
	stable volatility = iota
	isTime
	isDevice
)

// allowed says whether member name of want, of volatility v, is patched.
func (p *patcher) allowed(v volatility, want *parser.Struct, name string) bool {
	switch v {
	case isTime:
		return p.opt.Times || timeEdited(want, name)
	case isDevice:
		return p.opt.Devices
	}
	return true
}

// member is one field of a kernel structure: how to read the line's
// value, how to get and set it in the structure, and how the decoder
// prints it (for descriptions).
type member[T any] struct {
	vol   volatility
	parse func(e *parser.Expr) (uint64, error)
	get   func(st *T) uint64
	set   func(st *T, v uint64)
	show  func(v uint64) string
}

func showDec(v uint64) string  { return parser.Format(parser.Dec(int64(v))) }
func showUdec(v uint64) string { return parser.Format(parser.Udec(v)) }
func showMode(v uint64) string { return parser.Format(modeExpr(uint32(v))) }
func showDev(v uint64) string  { return parser.Format(makedev(v)) }
func showHex(v uint64) string  { return parser.Format(parser.Hex(v)) }

func parseInt(e *parser.Expr) (uint64, error) {
	v, err := intOf(e)
	return uint64(v), err
}
func parseMode(e *parser.Expr) (uint64, error) {
	v, err := modeOf(e)
	return uint64(v), err
}

var statMembers = map[string]member[unix.Stat_t]{
	"st_dev": {isDevice, devOf, func(s *unix.Stat_t) uint64 { return s.Dev }, func(s *unix.Stat_t, v uint64) { s.Dev = v }, showDev},
	"st_ino": {stable, uintOf, func(s *unix.Stat_t) uint64 { return s.Ino }, func(s *unix.Stat_t, v uint64) { s.Ino = v }, showUdec},
	"st_mode": {stable, parseMode, func(s *unix.Stat_t) uint64 { return uint64(s.Mode) },
		func(s *unix.Stat_t, v uint64) { s.Mode = uint32(v) }, showMode},
	"st_nlink": {stable, uintOf, func(s *unix.Stat_t) uint64 { return s.Nlink }, func(s *unix.Stat_t, v uint64) { s.Nlink = v }, showUdec},
	"st_uid": {stable, uintOf, func(s *unix.Stat_t) uint64 { return uint64(s.Uid) },
		func(s *unix.Stat_t, v uint64) { s.Uid = uint32(v) }, showUdec},
	"st_gid": {stable, uintOf, func(s *unix.Stat_t) uint64 { return uint64(s.Gid) },
		func(s *unix.Stat_t, v uint64) { s.Gid = uint32(v) }, showUdec},
	"st_rdev": {stable, devOf, func(s *unix.Stat_t) uint64 { return s.Rdev }, func(s *unix.Stat_t, v uint64) { s.Rdev = v }, showDev},
	"st_size": {stable, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Size) },
		func(s *unix.Stat_t, v uint64) { s.Size = int64(v) }, showDec},
	"st_blksize": {stable, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Blksize) },
		func(s *unix.Stat_t, v uint64) { s.Blksize = int64(v) }, showDec},
	"st_blocks": {stable, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Blocks) },
		func(s *unix.Stat_t, v uint64) { s.Blocks = int64(v) }, showDec},
	"st_atime": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Atim.Sec) },
		func(s *unix.Stat_t, v uint64) { s.Atim.Sec = int64(v) }, showDec},
	"st_atime_nsec": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Atim.Nsec) },
		func(s *unix.Stat_t, v uint64) { s.Atim.Nsec = int64(v) }, showUdec},
	"st_mtime": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Mtim.Sec) },
		func(s *unix.Stat_t, v uint64) { s.Mtim.Sec = int64(v) }, showDec},
	"st_mtime_nsec": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Mtim.Nsec) },
		func(s *unix.Stat_t, v uint64) { s.Mtim.Nsec = int64(v) }, showUdec},
	"st_ctime": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Ctim.Sec) },
		func(s *unix.Stat_t, v uint64) { s.Ctim.Sec = int64(v) }, showDec},
	"st_ctime_nsec": {isTime, parseInt, func(s *unix.Stat_t) uint64 { return uint64(s.Ctim.Nsec) },
		func(s *unix.Stat_t, v uint64) { s.Ctim.Nsec = int64(v) }, showUdec},
}

var statxMembers = map[string]member[unix.Statx_t]{
	"stx_mask": {stable, func(e *parser.Expr) (uint64, error) { return flagsOf(e, statxMask) },
		func(s *unix.Statx_t) uint64 { return uint64(s.Mask) }, func(s *unix.Statx_t, v uint64) { s.Mask = uint32(v) },
		func(v uint64) string { return parser.Format(statxMask.expr(v, "")) }},
	"stx_blksize": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Blksize) },
		func(s *unix.Statx_t, v uint64) { s.Blksize = uint32(v) }, showUdec},
	"stx_attributes": {stable, func(e *parser.Expr) (uint64, error) { return flagsOf(e, statxAttrs) },
		func(s *unix.Statx_t) uint64 { return s.Attributes }, func(s *unix.Statx_t, v uint64) { s.Attributes = v },
		func(v uint64) string { return parser.Format(statxAttrs.expr(v, "")) }},
	"stx_nlink": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Nlink) },
		func(s *unix.Statx_t, v uint64) { s.Nlink = uint32(v) }, showUdec},
	"stx_uid": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Uid) },
		func(s *unix.Statx_t, v uint64) { s.Uid = uint32(v) }, showUdec},
	"stx_gid": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Gid) },
		func(s *unix.Statx_t, v uint64) { s.Gid = uint32(v) }, showUdec},
	"stx_mode": {stable, parseMode, func(s *unix.Statx_t) uint64 { return uint64(s.Mode) },
		func(s *unix.Statx_t, v uint64) { s.Mode = uint16(v) }, showMode},
	"stx_ino":    {stable, uintOf, func(s *unix.Statx_t) uint64 { return s.Ino }, func(s *unix.Statx_t, v uint64) { s.Ino = v }, showUdec},
	"stx_size":   {stable, uintOf, func(s *unix.Statx_t) uint64 { return s.Size }, func(s *unix.Statx_t, v uint64) { s.Size = v }, showUdec},
	"stx_blocks": {stable, uintOf, func(s *unix.Statx_t) uint64 { return s.Blocks }, func(s *unix.Statx_t, v uint64) { s.Blocks = v }, showUdec},
	"stx_attributes_mask": {stable, func(e *parser.Expr) (uint64, error) { return flagsOf(e, statxAttrs) },
		func(s *unix.Statx_t) uint64 { return s.Attributes_mask }, func(s *unix.Statx_t, v uint64) { s.Attributes_mask = v },
		func(v uint64) string { return parser.Format(statxAttrs.expr(v, "")) }},
	"stx_rdev_major": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Rdev_major) },
		func(s *unix.Statx_t, v uint64) { s.Rdev_major = uint32(v) }, showUdec},
	"stx_rdev_minor": {stable, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Rdev_minor) },
		func(s *unix.Statx_t, v uint64) { s.Rdev_minor = uint32(v) }, showUdec},
	"stx_dev_major": {isDevice, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Dev_major) },
		func(s *unix.Statx_t, v uint64) { s.Dev_major = uint32(v) }, showUdec},
	"stx_dev_minor": {isDevice, uintOf, func(s *unix.Statx_t) uint64 { return uint64(s.Dev_minor) },
		func(s *unix.Statx_t, v uint64) { s.Dev_minor = uint32(v) }, showUdec},
	"stx_mnt_id": {isDevice, uintOf, func(s *unix.Statx_t) uint64 { return s.Mnt_id }, func(s *unix.Statx_t, v uint64) { s.Mnt_id = v }, showHex},
}

// statxTimes are statx's {tv_sec=..., tv_nsec=...} members.
var statxTimes = map[string]func(s *unix.Statx_t) *unix.StatxTimestamp{
	"stx_atime": func(s *unix.Statx_t) *unix.StatxTimestamp { return &s.Atime },
	"stx_btime": func(s *unix.Statx_t) *unix.StatxTimestamp { return &s.Btime },
	"stx_ctime": func(s *unix.Statx_t) *unix.StatxTimestamp { return &s.Ctime },
	"stx_mtime": func(s *unix.Statx_t) *unix.StatxTimestamp { return &s.Mtime },
}

// patchMembers compares each named member of want with st and sets the
// ones that differ; it reports whether any changed.
func patchMembers[T any](p *patcher, want *parser.Struct, st *T, members map[string]member[T], extra func(f *parser.Arg) (bool, bool, error)) (bool, error) {
	changed := false
	for _, f := range want.Fields {
		if f.Name == "" {
			continue // the "..." of left-out members
		}
		name := string(f.Name)
		m, ok := members[name]
		if !ok {
			if extra != nil {
				known, ch, err := extra(f)
				if err != nil {
					return changed, err
				}
				if known {
					changed = changed || ch
					continue
				}
			}
			return changed, fmt.Errorf("the line's structure has a member %s this call does not return", name)
		}
		if !p.allowed(m.vol, want, name) {
			continue
		}
		v, err := m.parse(f.Value)
		if err != nil {
			return changed, fmt.Errorf("%s: %w", name, err)
		}
		old := m.get(st)
		m.set(st, v)
		if m.get(st) != v {
			return changed, fmt.Errorf("%s: %s does not fit the member", name, parser.Format(f.Value))
		}
		if old != v {
			p.note("%s %s -> %s", name, m.show(old), m.show(v))
			changed = true
		}
	}
	return changed, nil
}

// stat patches a struct stat at argument i.
func (p *patcher) stat(i int) error {
	if err := p.resultOnly(); err != nil {
		return err
	}
	want := structOf(p.wantArg(i))
	if want == nil {
		return nil // the recorder could not read it: an address
	}
	addr := p.arg(i)
	var st unix.Stat_t
	if err := readStruct(p.s.Tid, addr, &st); err != nil {
		return fmt.Errorf("read struct stat: %w", err)
	}
	changed, err := patchMembers(p, want, &st, statMembers, nil)
	if err != nil || !changed {
		return err
	}
	if err := writeStruct(p.s.Tid, addr, &st); err != nil {
		return fmt.Errorf("write struct stat: %w", err)
	}
	return nil
}

// statx patches a struct statx at argument i.
func (p *patcher) statx(i int) error {
	if err := p.resultOnly(); err != nil {
		return err
	}
	want := structOf(p.wantArg(i))
	if want == nil {
		return nil
	}
	addr := p.arg(i)
	var st unix.Statx_t
	if err := readStruct(p.s.Tid, addr, &st); err != nil {
		return fmt.Errorf("read struct statx: %w", err)
	}
	times := func(f *parser.Arg) (bool, bool, error) {
		get, ok := statxTimes[string(f.Name)]
		if !ok {
			return false, false, nil
		}
		sec, nsec, err := timespecOf(f.Value, "tv_nsec")
		if err != nil {
			return true, false, fmt.Errorf("%s: %w", f.Name, err)
		}
		if !p.opt.Times && commentText(f.Value.Comment) == isoComment(sec, nsec) {
			return true, false, nil
		}
		ts := get(&st)
		if ts.Sec == sec && int64(ts.Nsec) == nsec {
			return true, false, nil
		}
		if nsec < 0 || nsec > 0xffffffff {
			return true, false, fmt.Errorf("%s: tv_nsec %d out of range", f.Name, nsec)
		}
		p.note("%s %s -> %s", f.Name, parser.Format(tsStruct(timespec{ts.Sec, int64(ts.Nsec)})), parser.Format(tsStruct(timespec{sec, nsec})))
		ts.Sec, ts.Nsec = sec, uint32(nsec)
		return true, true, nil
	}
	changed, err := patchMembers(p, want, &st, statxMembers, times)
	if err != nil || !changed {
		return err
	}
	if err := writeStruct(p.s.Tid, addr, &st); err != nil {
		return fmt.Errorf("write struct statx: %w", err)
	}
	return nil
}

// timeEdited says whether a stat timestamp member (st_mtime or
// st_mtime_nsec) was edited: its seconds no longer carry the date the
// recorder printed for them.
func timeEdited(st *parser.Struct, name string) bool {
	base := strings.TrimSuffix(name, "_nsec")
	sf := st.Field(base)
	if sf == nil {
		return true
	}
	sec, err := intOf(sf.Value)
	if err != nil {
		return true // reported when the member is parsed
	}
	var nsec int64
	if nf := st.Field(base + "_nsec"); nf != nil {
		if nsec, err = intOf(nf.Value); err != nil {
			return true
		}
	}
	return commentText(sf.Value.Comment) != isoComment(sec, nsec)
}

// resultOnly makes a call whose result is a plain 0 on success agree
// with a line that says another success value (which no kernel gives,
// but a person may type).
func (p *patcher) resultOnly() error {
	want, ok, _ := wantRet(p.want.Result)
	if !ok || want == p.ret {
		return nil
	}
	p.note("result %s -> %s", retText(p.ret), retText(want))
	return p.setResult(want)
}

// timespecOf reads {tv_sec=1, tv_nsec=2} (or tv_usec, as nsecName says).
func timespecOf(e *parser.Expr, nsecName string) (sec, nsec int64, err error) {
	st := structOf(e)
	if st == nil {
		return 0, 0, fmt.Errorf("%s is not a {tv_sec=..., %s=...} structure", parser.Format(e), nsecName)
	}
	fs := st.Field("tv_sec")
	fn := st.Field(nsecName)
	if fs == nil || fn == nil {
		return 0, 0, fmt.Errorf("%s lacks tv_sec or %s", parser.Format(e), nsecName)
	}
	if sec, err = intOf(fs.Value); err != nil {
		return 0, 0, fmt.Errorf("tv_sec: %w", err)
	}
	if nsec, err = intOf(fn.Value); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", nsecName, err)
	}
	return sec, nsec, nil
}
