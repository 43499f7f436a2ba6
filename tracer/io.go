package tracer

import (
	"github.com/faultline/faultline/parser"
)

// I/O vectors, pollfds, fd_sets, pipe pairs, directory entries and the
// in/out offsets of copy_file_range and sendfile.

type iovec struct{ Base, Len uint64 }

// iovecs prints n vectors; limit bytes of data are shown in all (the
// call's result at exit, the lengths at entry).
func (d *dec) iovecs(addr uint64, n uint64, limit int64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	if n > 1024 {
		return parser.Hex(addr)
	}
	vs := make([]iovec, n)
	for j := range vs {
		if readStruct(d.pid, addr+uint64(16*j), &vs[j]) != nil {
			return parser.Hex(addr)
		}
	}
	var el []*parser.Expr
	for j, v := range vs {
		if j >= d.t.c.StringLimit {
			el = append(el, parser.X(&parser.Ellipsis{}))
			break
		}
		show := int64(v.Len)
		if limit >= 0 && show > limit {
			show = limit
		}
		var base *parser.Expr
		if show <= 0 && limit >= 0 {
			base = ptr(v.Base)
			if v.Len == 0 {
				base = parser.Quoted(nil, parser.QuoteDefault, false)
			}
		} else {
			base = d.buf(v.Base, int(show), false, parser.QuoteDefault)
		}
		if limit >= 0 {
			limit -= show
		}
		el = append(el, parser.NewStruct(parser.Field("iov_base", base), parser.Field("iov_len", parser.Udec(v.Len))))
	}
	return parser.NewArray(el...)
}

var (
	kIovecIn = kind{in: func(d *dec, i int) *parser.Arg {
		return pos(d.iovecs(d.arg(i), d.arg(i+1), -1))
	}}
	kIovecOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.iovecs(d.arg(i), d.arg(i+1), d.ret))
	}}
	// kIovcntOut is the count after an out-vector, printed at exit.
	kIovcntOut = kUlongOut
)

type pollfd struct {
	Fd             int32
	Events, Revent int16
}

func (d *dec) pollfds(addr uint64, n uint64, revents bool) (*parser.Expr, int) {
	if addr == 0 {
		return parser.Null(), 0
	}
	if n > 4096 {
		return parser.Hex(addr), 0
	}
	var el []*parser.Expr
	shown := 0
	for j := uint64(0); j < n; j++ {
		var p pollfd
		if readStruct(d.pid, addr+8*j, &p) != nil {
			return parser.Hex(addr), 0
		}
		if revents && p.Revent == 0 {
			continue
		}
		ev := parser.Field("events", pollEvents.expr(uint64(uint16(p.Events)), ""))
		if revents {
			ev = parser.Field("revents", pollEvents.expr(uint64(uint16(p.Revent)), ""))
		}
		fd := d.fd(int64(p.Fd))
		if revents {
			fd = parser.Dec(int64(p.Fd)) // strace decorates the request, not the answer
		}
		el = append(el, parser.NewStruct(parser.Field("fd", fd), ev))
		shown++
	}
	return parser.NewArray(el...), shown
}

var kPollfds = kind{in: func(d *dec, i int) *parser.Arg {
	e, _ := d.pollfds(d.arg(i), d.arg(i+1), false)
	return pos(e)
}}

// retPoll adds the ready descriptors: "= 1 ([{fd=7, revents=POLLOUT}])".
func retPoll(d *dec) *parser.Result {
	r := parser.Ret(parser.Dec(d.ret))
	if d.ret == 0 {
		r.Outcome.Notes = []string{"(Timeout)"}
		return r
	}
	e, _ := d.pollfds(d.arg(0), d.arg(1), true)
	r.Outcome.Notes = []string{"(" + formatExpr(e) + ")"}
	return r
}

// fdset prints an fd_set of nfds bits as [3 4].
func (d *dec) fdset(addr uint64, nfds int) (*parser.Expr, []string) {
	if addr == 0 {
		return parser.Null(), nil
	}
	if nfds < 0 || nfds > 1<<20 {
		return parser.Hex(addr), nil
	}
	b := make([]byte, (nfds+63)/64*8)
	if readFull(d.pid, addr, b) != nil {
		return parser.Hex(addr), nil
	}
	var bits []string
	set := &parser.BitSet{}
	for fd := 0; fd < nfds; fd++ {
		if b[fd/8]&(1<<(fd%8)) != 0 {
			bits = append(bits, itoa(fd))
			set.Bits = append(set.Bits, d.fd(int64(fd)))
		}
	}
	return parser.X(set), bits
}

var kFdset = kind{
	in: func(d *dec, i int) *parser.Arg {
		e, _ := d.fdset(d.arg(i), int(int32(d.arg(0))))
		return pos(e)
	},
}

// retSelect lists what became ready and the time left:
// "= 1 (in [6], left {tv_sec=0, tv_nsec=999})".
func retSelect(d *dec) *parser.Result {
	r := parser.Ret(parser.Dec(d.ret))
	if d.ret == 0 {
		r.Outcome.Notes = []string{"(Timeout)"}
		return r
	}
	nfds := int(int32(d.arg(0)))
	note := ""
	for j, name := range []string{"in", "out", "except"} {
		if d.arg(1+j) == 0 {
			continue
		}
		_, bits := d.fdset(d.arg(1+j), nfds)
		if len(bits) == 0 {
			continue
		}
		if note != "" {
			note += ", "
		}
		note += name + " " + formatExpr(parser.NewBitSet(false, bits...))
	}
	if d.arg(4) != 0 {
		var left *parser.Expr
		if d.name == "select" {
			left = d.timeval(d.arg(4))
		} else {
			left = d.timespec(d.arg(4))
		}
		note += ", left " + formatExpr(left)
	}
	r.Outcome.Notes = []string{"(" + note + ")"}
	return r
}

// kPselectMask is pselect6's {sigmask, size} pair.
var kPselectMask = kind{in: func(d *dec, i int) *parser.Arg {
	addr := d.arg(i)
	if addr == 0 {
		return pos(parser.Null())
	}
	var pair [2]uint64
	if readStruct(d.pid, addr, &pair) != nil {
		return pos(parser.Hex(addr))
	}
	return pos(parser.NewStruct(parser.Positional(d.sigset(pair[0], pair[1])), parser.Positional(parser.Udec(pair[1]))))
}}

// kPipeFds is pipe's [3, 4].
var kPipeFds = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	var fds [2]int32
	if d.failed() || readStruct(d.pid, d.arg(i), &fds) != nil {
		return pos(ptr(d.arg(i)))
	}
	return pos(parser.NewArray(d.fd(int64(fds[0])), d.fd(int64(fds[1]))))
}}

var dirTypes = enum{0: "DT_UNKNOWN", 1: "DT_FIFO", 2: "DT_CHR", 4: "DT_DIR", 6: "DT_BLK", 8: "DT_REG", 10: "DT_LNK", 12: "DT_SOCK", 14: "DT_WHT"}

// kDirents is getdents64's buffer: its address and entry count, every
// entry with -v.
var kDirents = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	addr := d.arg(i)
	if d.failed() {
		return pos(ptr(addr))
	}
	n := int(d.ret)
	b := make([]byte, n)
	if n > 0 && readFull(d.pid, addr, b) != nil {
		return pos(parser.Hex(addr))
	}
	var el []*parser.Expr
	count := 0
	for off := 0; off+19 <= n; {
		reclen := int(uint16(b[off+16]) | uint16(b[off+17])<<8)
		if reclen == 0 || off+reclen > n {
			break
		}
		count++
		if d.t.c.Verbose {
			name := b[off+19 : off+reclen]
			for k, c := range name {
				if c == 0 {
					name = name[:k]
					break
				}
			}
			el = append(el, parser.NewStruct(
				parser.Field("d_ino", parser.Udec(le64(b[off:]))),
				parser.Field("d_off", parser.Dec(int64(le64(b[off+8:])))),
				parser.Field("d_reclen", parser.Udec(uint64(reclen))),
				parser.Field("d_type", dirTypes.expr(uint64(b[off+18]), "")),
				parser.Field("d_name", parser.Quoted(name, parser.QuoteDefault, false))))
		}
		off += reclen
	}
	if d.t.c.Verbose {
		return pos(parser.NewArray(el...))
	}
	word := "entries"
	if count == 1 {
		word = "entry"
	}
	return pos(parser.Hex(addr).WithComment(itoa(count) + " " + word))
}}

// kOffsetInOut is a loff_t pointer the kernel advances: [0] at entry
// (sendfile prints [0] => [5] at exit).
var kOffsetIn = kind{in: func(d *dec, i int) *parser.Arg {
	addr := d.arg(i)
	if addr == 0 {
		return pos(parser.Null())
	}
	v, err := readWord(d.pid, addr)
	if err != nil {
		return pos(parser.Hex(addr))
	}
	return pos(parser.NewArray(parser.Dec(int64(v))))
}}

var kOffsetInOut = kind{
	in:   kOffsetIn.in,
	late: func(d *dec) bool { return d.arg(2) != 0 },
	out: func(d *dec, i int, a *parser.Arg) *parser.Arg {
		if a == nil || d.failed() {
			return a
		}
		if v, err := readWord(d.pid, d.arg(i)); err == nil {
			a.Out = parser.NewArray(parser.Dec(int64(v)))
		}
		return a
	},
}

// getrandom's bytes are printed in hex whatever they are.
var kRandomOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	return pos(d.buf(d.arg(i), int(d.ret), false, parser.QuoteHexAll))
}}

// Extended attributes: values are strings without their trailing NUL;
// name lists keep their NULs.
var (
	kXattrValIn = kind{in: func(d *dec, i int) *parser.Arg {
		return pos(d.xattrVal(d.arg(i), int(d.arg(i+1))))
	}}
	kXattrValOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() || d.arg(i+1) == 0 {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.xattrVal(d.arg(i), int(d.ret)))
	}}
	kXattrListOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() || d.arg(i+1) == 0 {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.buf(d.arg(i), int(d.ret), false, parser.QuoteDefault))
	}}
)

func (d *dec) xattrVal(addr uint64, n int) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	max := d.t.c.StringLimit
	want := n
	if want > max {
		want = max
	}
	b := make([]byte, want)
	if readFull(d.pid, addr, b) != nil {
		return parser.Hex(addr)
	}
	trunc := n > max
	if !trunc && len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return parser.Quoted(b, parser.QuoteDefault, trunc)
}

// formatExpr prints a value on its own, for result notes.
func formatExpr(e *parser.Expr) string { return parser.Format(e) }
