package tracer

import (
	"strconv"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Processes: execve, clone, clone3, wait4.

// strArray prints a NULL-terminated array of strings (argv, envp).
func (d *dec) strArray(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var el []*parser.Expr
	max := d.t.c.StringLimit
	_, err := pointers(d.pid, addr, func(n int, p uint64) bool {
		if n >= max {
			el = append(el, parser.X(&parser.Ellipsis{}))
			return false
		}
		el = append(el, d.cstr(p))
		return true
	})
	if err != nil {
		return parser.Hex(addr)
	}
	return parser.NewArray(el...)
}

// countArray counts the entries of a NULL-terminated pointer array.
func (d *dec) countArray(addr uint64) (int, bool) {
	count := 0
	terminated, err := pointers(d.pid, addr, func(n int, _ uint64) bool {
		count = n + 1
		return n < 1<<20
	})
	if err != nil || !terminated {
		return 0, false
	}
	return count, true
}

var (
	kArgv = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.strArray(d.arg(i))) }}
	// kEnvp is the address and a count by default, the strings with -v.
	kEnvp = kind{in: func(d *dec, i int) *parser.Arg {
		addr := d.arg(i)
		if d.t.c.Verbose || addr == 0 {
			return pos(d.strArray(addr))
		}
		n, ok := d.countArray(addr)
		if !ok {
			return pos(parser.Hex(addr))
		}
		word := "vars"
		if n == 1 {
			word = "var"
		}
		return pos(parser.Hex(addr).WithComment(itoa(n) + " " + word))
	}}
)

// cloneFlagsExpr prints flags with the exit signal in the low byte.
func cloneFlagsExpr(v uint64) *parser.Expr {
	sig := v & 0xff
	fl := v &^ 0xff
	names := cloneFlags.names(fl)
	if sig != 0 {
		names = append(names, signalName(unix.Signal(sig)))
	}
	if len(names) == 0 {
		return parser.Dec(0)
	}
	return parser.Flags(names...)
}

// clone(flags, stack, parent_tid, child_tid, tls) on x86-64; strace
// prints the stack and flags at entry and the pointers at exit.
const cloneIDs = unix.CLONE_PARENT_SETTID | unix.CLONE_PIDFD | unix.CLONE_CHILD_SETTID | unix.CLONE_CHILD_CLEARTID | unix.CLONE_SETTLS

var kCloneStack = kind{in: func(d *dec, i int) *parser.Arg { return parser.Field("child_stack", ptr(d.arg(1))) }}
var kCloneFlags = kind{in: func(d *dec, i int) *parser.Arg { return parser.Field("flags", cloneFlagsExpr(d.arg(0))) }}

// The pointers clone prints at exit, each only when its flag is set;
// the separator before the first is printed at exit too
// ("<... clone resumed>, child_tidptr=...").
var (
	kCloneParentTid = kind{lateComma: true, out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.arg(0)&(unix.CLONE_PARENT_SETTID|unix.CLONE_PIDFD) == 0 {
			return nil
		}
		addr := d.arg(2)
		if x, err := readWord(d.pid, addr); err == nil && !d.failed() {
			return parser.Field("parent_tid", parser.NewArray(parser.Dec(int64(int32(x)))))
		}
		return parser.Field("parent_tid", ptr(addr))
	}}
	kCloneTLS = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.arg(0)&unix.CLONE_SETTLS == 0 {
			return nil
		}
		return parser.Field("tls", ptr(d.arg(4)))
	}}
	kCloneChildTid = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.arg(0)&(unix.CLONE_CHILD_SETTID|unix.CLONE_CHILD_CLEARTID) == 0 {
			return nil
		}
		return parser.Field("child_tidptr", ptr(d.arg(3)))
	}}
)

type cloneArgs struct {
	Flags, Pidfd, ChildTid, ParentTid, ExitSignal, Stack, StackSize, TLS, SetTid, SetTidSize, Cgroup uint64
}

// kClone3 is the clone_args struct, with "=> {parent_tid=[N]}" at exit
// when the kernel writes ids back.
var kClone3 = kind{
	save: func(d *dec, i int) {
		var a cloneArgs
		if readStruct(d.pid, d.arg(0), &a) == nil {
			d.saved[0] = a.Flags
			d.saved[1] = 1
		}
	},
	in: func(d *dec, i int) *parser.Arg {
		var a cloneArgs
		if d.arg(1) < 64 || readStruct(d.pid, d.arg(0), &a) != nil {
			return pos(ptr(d.arg(0)))
		}
		f := []*parser.Arg{parser.Field("flags", cloneFlagsExpr(a.Flags&^0xff))}
		if a.Flags&unix.CLONE_PIDFD != 0 {
			f = append(f, parser.Field("pidfd", ptr(a.Pidfd)))
		}
		if a.Flags&(unix.CLONE_CHILD_SETTID|unix.CLONE_CHILD_CLEARTID) != 0 {
			f = append(f, parser.Field("child_tid", ptr(a.ChildTid)))
		}
		if a.Flags&unix.CLONE_PARENT_SETTID != 0 {
			f = append(f, parser.Field("parent_tid", ptr(a.ParentTid)))
		}
		f = append(f, parser.Field("exit_signal", sigExpr(int64(a.ExitSignal))))
		f = append(f, parser.Field("stack", ptr(a.Stack)), parser.Field("stack_size", parser.Hex(a.StackSize)))
		if a.Flags&unix.CLONE_SETTLS != 0 {
			f = append(f, parser.Field("tls", ptr(a.TLS)))
		}
		if a.SetTidSize != 0 || a.SetTid != 0 {
			f = append(f, parser.Field("set_tid", ptr(a.SetTid)), parser.Field("set_tid_size", parser.Udec(a.SetTidSize)))
		}
		if a.Cgroup != 0 || a.Flags&unix.CLONE_INTO_CGROUP != 0 {
			f = append(f, parser.Field("cgroup", parser.Udec(a.Cgroup)))
		}
		return pos(parser.NewStruct(f...))
	},
	late: func(d *dec) bool { return !d.clone3Decoded() },
	out: func(d *dec, i int, a *parser.Arg) *parser.Arg {
		var ca cloneArgs
		if d.failed() || readStruct(d.pid, d.arg(0), &ca) != nil {
			return a
		}
		var f []*parser.Arg
		if ca.Flags&unix.CLONE_PIDFD != 0 {
			if v, err := readWord(d.pid, ca.Pidfd); err == nil {
				f = append(f, parser.Field("pidfd", parser.NewArray(d.fd(int64(int32(v))))))
			}
		}
		if ca.Flags&unix.CLONE_PARENT_SETTID != 0 {
			if v, err := readWord(d.pid, ca.ParentTid); err == nil {
				f = append(f, parser.Field("parent_tid", parser.NewArray(parser.Dec(int64(int32(v))))))
			}
		}
		if len(f) > 0 && a != nil {
			a.Out = parser.NewStruct(f...)
		}
		return a
	},
}

// clone3Decoded reports whether strace prints clone3 whole at entry.
func (d *dec) clone3Decoded() bool {
	return d.saved[1] == 1 && d.saved[0]&(unix.CLONE_PIDFD|unix.CLONE_PARENT_SETTID) == 0
}

// wait status: [{WIFEXITED(s) && WEXITSTATUS(s) == 0}].
func waitStatus(s unix.WaitStatus) *parser.Expr {
	call := func(name string) *parser.Ident {
		return &parser.Ident{Name: name, Call: &parser.Tuple{Args: []*parser.Arg{parser.Positional(parser.Sym("s"))}}}
	}
	e := &parser.Expr{}
	add := func(op string, v parser.Value) {
		if e.Head == nil {
			e.Head = v
			return
		}
		e.Tail = append(e.Tail, &parser.BinOp{Op: op, X: v})
	}
	switch {
	case s.Exited():
		add("", call("WIFEXITED"))
		add("&&", call("WEXITSTATUS"))
		add("==", &parser.Int{Text: itoa(s.ExitStatus())})
	case s.Signaled():
		add("", call("WIFSIGNALED"))
		add("&&", call("WTERMSIG"))
		add("==", &parser.Ident{Name: signalName(s.Signal())})
		if s.CoreDump() {
			add("&&", call("WCOREDUMP"))
		}
	case s.Stopped():
		add("", call("WIFSTOPPED"))
		add("&&", call("WSTOPSIG"))
		add("==", &parser.Ident{Name: signalName(s.StopSignal())})
	case s.Continued():
		add("", call("WIFCONTINUED"))
	default:
		return parser.Hex(uint64(s))
	}
	return parser.NewArray(parser.NewStruct(parser.Positional(e)))
}

var kWaitStatus = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	addr := d.arg(i)
	if addr == 0 || d.failed() || d.ret == 0 {
		return pos(ptr(addr))
	}
	var b [4]byte
	if readFull(d.pid, addr, b[:]) != nil {
		return pos(parser.Hex(addr))
	}
	return pos(waitStatus(unix.WaitStatus(le32(b[:]))))
}}

// kRusage prints the times of a struct rusage and "..." for the rest.
var kRusage = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	addr := d.arg(i)
	if addr == 0 || d.failed() {
		return pos(ptr(addr))
	}
	var ru unix.Rusage
	if readStruct(d.pid, addr, &ru) != nil {
		return pos(parser.Hex(addr))
	}
	return pos(parser.NewStruct(
		parser.Field("ru_utime", tvStruct(timespec{ru.Utime.Sec, ru.Utime.Usec})),
		parser.Field("ru_stime", tvStruct(timespec{ru.Stime.Sec, ru.Stime.Usec})),
		parser.More()))
}}

func itoa(n int) string { return strconv.Itoa(n) }
