package tracer

import (
	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Calls outside the file-system core that every program makes at start
// (futex, prlimit64, uname, sched_getaffinity, arch_prctl), decoded so
// that traces read like strace's.

func rlimValue(v uint64) *parser.Expr {
	switch {
	case v == ^uint64(0):
		return parser.Sym("RLIM64_INFINITY")
	case v != 0 && v%1024 == 0:
		return &parser.Expr{Head: &parser.Int{Text: itoa(int(v / 1024))}, Tail: []*parser.BinOp{{Op: "*", X: &parser.Int{Text: "1024"}}}}
	}
	return parser.Udec(v)
}

func (d *dec) rlimit(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var r [2]uint64
	if readStruct(d.pid, addr, &r) != nil {
		return parser.Hex(addr)
	}
	return parser.NewStruct(parser.Field("rlim_cur", rlimValue(r[0])), parser.Field("rlim_max", rlimValue(r[1])))
}

var (
	kRlimitIn  = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.rlimit(d.arg(i))) }}
	kRlimitOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.rlimit(d.arg(i)))
	}}
)

// futex prints the arguments its operation uses.
var kFutexOp = kind{in: func(d *dec, i int) *parser.Arg { return pos(futexOp(d.arg(i))) }}

func futexOp(v uint64) *parser.Expr {
	op := v & 0x7f
	name, ok := futexOps[op]
	if !ok {
		return parser.Hex(v)
	}
	if v&128 != 0 {
		name += "_PRIVATE"
	}
	names := []string{name}
	if v&256 != 0 {
		names = append(names, "FUTEX_CLOCK_REALTIME")
	}
	if rest := v &^ (0x7f | 128 | 256); rest != 0 {
		names = append(names, parser.Format(parser.Hex(rest)))
	}
	return parser.Flags(names...)
}

// futexArg is argument i (2-5) of futex, or nil when op does not use it.
func futexArg(i int) kind {
	return kind{in: func(d *dec, _ int) *parser.Arg {
		op := d.arg(1) & 0x7f
		v := d.arg(i)
		switch op {
		case 0: // FUTEX_WAIT: uaddr, op, val, timeout
			switch i {
			case 2:
				return pos(parser.Udec(uint64(uint32(v))))
			case 3:
				return pos(d.timespec(v))
			}
			return nil
		case 1, 7, 8: // WAKE, UNLOCK_PI, TRYLOCK_PI
			if i == 2 {
				return pos(parser.Udec(uint64(uint32(v))))
			}
			return nil
		case 9, 10: // WAIT_BITSET, WAKE_BITSET
			switch i {
			case 2:
				return pos(parser.Udec(uint64(uint32(v))))
			case 3:
				if op == 10 {
					return pos(ptr(v))
				}
				return pos(d.timespec(v))
			case 4:
				return nil
			case 5:
				if uint32(v) == 0xffffffff {
					return pos(parser.Sym("FUTEX_BITSET_MATCH_ANY"))
				}
				return pos(parser.Hex(uint64(uint32(v))))
			}
		}
		switch i {
		case 2, 5:
			return pos(parser.Udec(uint64(uint32(v))))
		}
		return pos(ptr(v))
	}}
}

var kArchPrctlArg = kind{in: func(d *dec, i int) *parser.Arg {
	switch d.arg(0) {
	case 0x1003, 0x1004:
		return pos(ptr(d.arg(i)))
	}
	return pos(parser.Hex(d.arg(i)))
}}

// kCPUSet is sched_getaffinity's mask: [0 1].
var kCPUSet = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	n := int(d.ret)
	b := make([]byte, n)
	if readFull(d.pid, d.arg(i), b) != nil {
		return pos(parser.Hex(d.arg(i)))
	}
	var cpus []string
	for c := 0; c < 8*n; c++ {
		if b[c/8]&(1<<(c%8)) != 0 {
			cpus = append(cpus, itoa(c))
		}
	}
	return pos(parser.NewBitSet(false, cpus...))
}}

// kUname is struct utsname: sysname and nodename, all fields with -v.
var kUname = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	var u unix.Utsname
	if readStruct(d.pid, d.arg(i), &u) != nil {
		return pos(parser.Hex(d.arg(i)))
	}
	s := func(b []byte) *parser.Expr {
		for k, c := range b {
			if c == 0 {
				b = b[:k]
				break
			}
		}
		return parser.Quoted(b, parser.QuoteDefault, false)
	}
	f := []*parser.Arg{parser.Field("sysname", s(u.Sysname[:])), parser.Field("nodename", s(u.Nodename[:]))}
	if !d.t.c.Verbose {
		return pos(parser.NewStruct(append(f, parser.More())...))
	}
	f = append(f, parser.Field("release", s(u.Release[:])), parser.Field("version", s(u.Version[:])),
		parser.Field("machine", s(u.Machine[:])), parser.Field("domainname", s(u.Domainname[:])))
	return pos(parser.NewStruct(f...))
}}

// kOpenHow is openat2's struct open_how.
var kOpenHow = kind{in: func(d *dec, i int) *parser.Arg {
	var h struct{ Flags, Mode, Resolve uint64 }
	if d.arg(i+1) < 24 || readStruct(d.pid, d.arg(i), &h) != nil {
		return pos(ptr(d.arg(i)))
	}
	f := []*parser.Arg{parser.Field("flags", openFlags(h.Flags))}
	if h.Flags&(0100|020000000) != 0 || h.Mode != 0 {
		f = append(f, parser.Field("mode", octMode(uint32(h.Mode))))
	}
	f = append(f, parser.Field("resolve", flagSet{{1, "RESOLVE_NO_XDEV"}, {2, "RESOLVE_NO_MAGICLINKS"}, {4, "RESOLVE_NO_SYMLINKS"},
		{8, "RESOLVE_BENEATH"}, {0x10, "RESOLVE_IN_ROOT"}, {0x20, "RESOLVE_CACHED"}}.expr(h.Resolve, "")))
	return pos(parser.NewStruct(f...))
}}

// kSigreturnMask is the mask rt_sigreturn restores, read from the
// signal frame's ucontext at the stack pointer.
var kSigreturnMask = kind{in: func(d *dec, i int) *parser.Arg {
	const ucSigmask = 40 + 256 // uc_flags, uc_link, uc_stack, uc_mcontext
	return pos(parser.NewStruct(parser.Field("mask", d.sigset(d.sp+ucSigmask, 8))))
}}

type msghdr struct {
	Name       uint64
	Namelen    uint32
	_          uint32
	Iov        uint64
	Iovlen     uint64
	Control    uint64
	Controllen uint64
	Flags      int32
	_          int32
}

func (d *dec) msghdr(addr uint64, limit int64) *parser.Expr {
	var m msghdr
	if addr == 0 {
		return parser.Null()
	}
	if readStruct(d.pid, addr, &m) != nil {
		return parser.Hex(addr)
	}
	name := d.sockaddr(m.Name, int(m.Namelen))
	f := []*parser.Arg{
		parser.Field("msg_name", name),
		parser.Field("msg_namelen", parser.Udec(uint64(m.Namelen))),
		parser.Field("msg_iov", d.iovecs(m.Iov, m.Iovlen, limit)),
		parser.Field("msg_iovlen", parser.Udec(m.Iovlen)),
	}
	if m.Controllen != 0 {
		f = append(f, parser.Field("msg_control", ptr(m.Control)))
	}
	f = append(f, parser.Field("msg_controllen", parser.Udec(m.Controllen)),
		parser.Field("msg_flags", msgFlags.expr(uint64(uint32(m.Flags)), "")))
	return parser.NewStruct(f...)
}

var (
	kMsghdrIn  = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.msghdr(d.arg(i), -1)) }}
	kMsghdrOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.msghdr(d.arg(i), d.ret))
	}}
)
