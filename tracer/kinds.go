package tracer

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// A kind is how one argument is printed: in prints it from what the
// program passed (at entry), out from what the kernel gave back (at
// exit). A kind with only out waits for the exit; one with both is an
// in/out argument printed "in => out". save runs at entry for kinds that
// need a value from then at exit (an addrlen, clone3's flags). A nil
// *parser.Arg from in or out leaves the argument out, as strace does
// for fcntl(fd, F_GETFD).
type kind struct {
	in   func(d *dec, i int) *parser.Arg
	out  func(d *dec, i int, a *parser.Arg) *parser.Arg
	save func(d *dec, i int)
	// late says whether an in/out argument has an out half this time
	// (nil: always); without one the call is printed whole at entry.
	late func(d *dec) bool
	// lateComma marks the first argument printed at exit when strace
	// prints the separator before it at exit too ("<... clone resumed>,").
	lateComma bool
}

// sysent is one row of the syscall table.
type sysent struct {
	name string
	args []kind
	ret  func(d *dec) *parser.Result
}

// dec is what a formatter sees of the call it prints.
type dec struct {
	t       *tracer
	pid     int
	nr      int
	name    string
	args    [6]uint64
	saved   [6]uint64
	ret     int64
	exiting bool
	sp      uint64 // stack pointer at entry
	retFn   func(d *dec) *parser.Result
}

// failed reports whether the call returned an error.
func (d *dec) failed() bool { return d.exiting && d.ret < 0 && d.ret >= -4095 }

// arg is argument i; the helpers below view it as C types.
func (d *dec) arg(i int) uint64  { return d.args[i] }
func (d *dec) int32(i int) int64 { return int64(int32(d.args[i])) }

func (sc *scall) decodeEntry() {
	d := &sc.d
	args := sc.se.args
	for i, k := range args {
		if k.save != nil {
			k.save(d, i)
		}
	}
	sc.split = len(args)
	// One allocation for the entry half, not one per growth.
	sc.entry = make([]*parser.Arg, 0, len(args))
	for i, k := range args {
		if k.in == nil {
			sc.split = i
			break
		}
		a := k.in(d, i)
		if a != nil {
			sc.entry = append(sc.entry, a)
		}
		if k.out != nil && (k.late == nil || k.late(d)) {
			sc.split = i
			if a != nil {
				sc.inout = a
			} else {
				// Nothing to show at entry: the argument is printed
				// whole at exit, like an out-argument.
				sc.outOnly = true
			}
			break
		}
	}
}

// decodeExit returns the out half of an in/out argument left open at
// entry, and the arguments printed at exit.
func (sc *scall) decodeExit() (*parser.Expr, []*parser.Arg) {
	d := &sc.d
	args := sc.se.args
	var out *parser.Expr
	i := sc.split
	if sc.inout != nil {
		if a := args[i].out(d, i, sc.inout); a != nil {
			out = a.Out
		}
		i++
	}
	var list []*parser.Arg
	for ; i < len(args); i++ {
		k := args[i]
		var a *parser.Arg
		if k.in != nil && !(sc.outOnly && i == sc.split) {
			a = k.in(d, i)
		}
		if k.out != nil {
			a = k.out(d, i, a)
		}
		if a != nil {
			list = append(list, a)
		}
	}
	return out, list
}

// result prints the return value with the call's return kind; failures
// print the same for every kind.
func (d *dec) result() *parser.Result {
	if d.ret < 0 && d.ret >= -4095 {
		return errnoResult(unix.Errno(-d.ret))
	}
	if d.retFn != nil {
		return d.retFn(d)
	}
	return parser.Ret(parser.Dec(d.ret))
}

// errnoResult is "= -1 ENOENT (No such file or directory)", or for the
// kernel's restart codes "= ? ERESTARTSYS (To be restarted ...)".
func errnoResult(e unix.Errno) *parser.Result {
	if name, text, ok := restartErrno(e); ok {
		r := parser.Unknown()
		r.Outcome.Errno = name
		r.Outcome.Notes = []string{"(" + text + ")"}
		return r
	}
	name := errnoName(e)
	if name == "" {
		return parser.Ret(parser.Dec(-int64(e)))
	}
	msg := e.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return parser.Fail(name, msg)
}

func restartErrno(e unix.Errno) (string, string, bool) {
	switch e {
	case 512:
		return "ERESTARTSYS", "To be restarted if SA_RESTART is set", true
	case 513:
		return "ERESTARTNOINTR", "To be restarted", true
	case 514:
		return "ERESTARTNOHAND", "To be restarted if no handler", true
	case 515:
		return "ENOIOCTLCMD", "No ioctl command", true
	case 516:
		return "ERESTART_RESTARTBLOCK", "Interrupted by signal", true
	}
	return "", "", false
}

// Return kinds.

func retHex(d *dec) *parser.Result { return parser.Ret(parser.Hex(uint64(d.ret))) }
func retOct(d *dec) *parser.Result { return parser.Ret(parser.Oct(uint64(d.ret))) }
func retFD(d *dec) *parser.Result  { return parser.Ret(d.fd(d.ret)) }
func retDec(d *dec) *parser.Result { return parser.Ret(parser.Dec(d.ret)) }

// lookup finds a call's row; calls without one print raw arguments, and
// numbers strace does not know print as syscall_0x1b6.
func lookup(nr int) *sysent {
	if nr < 0 || nr >= len(table) {
		return &sysent{name: fmt.Sprintf("syscall_%#x", uint64(nr)), args: rawArgs[:]}
	}
	if se := table[nr].Load(); se != nil {
		return se
	}
	name := sysNames[nr]
	se := &sysent{name: name, args: rawArgs[:]}
	if name == "" {
		se.name = fmt.Sprintf("syscall_%#x", uint64(nr))
	} else if s, ok := signature(name); ok {
		se.args, se.ret = s.args, s.ret
	}
	table[nr].CompareAndSwap(nil, se)
	return table[nr].Load()
}

var rawArgs = [6]kind{kHex, kHex, kHex, kHex, kHex, kHex}

// errnoName is strace's name for an errno where x/sys picks an alias.
func errnoName(e unix.Errno) string {
	switch e {
	case unix.EOPNOTSUPP:
		return "EOPNOTSUPP"
	case unix.EAGAIN:
		return "EAGAIN"
	case unix.EDEADLK:
		return "EDEADLK"
	}
	return unix.ErrnoName(e)
}
