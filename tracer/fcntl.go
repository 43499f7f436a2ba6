package tracer

import (
	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// fcntl: the third argument and the result depend on the command.

var fcntlCmds = enum{0: "F_DUPFD", 1: "F_GETFD", 2: "F_SETFD", 3: "F_GETFL", 4: "F_SETFL", 5: "F_GETLK", 6: "F_SETLK",
	7: "F_SETLKW", 8: "F_SETOWN", 9: "F_GETOWN", 10: "F_SETSIG", 11: "F_GETSIG", 15: "F_SETOWN_EX", 16: "F_GETOWN_EX",
	17: "F_GETOWNER_UIDS", 36: "F_OFD_GETLK", 37: "F_OFD_SETLK", 38: "F_OFD_SETLKW", 1024: "F_SETLEASE",
	1025: "F_GETLEASE", 1026: "F_NOTIFY", 1030: "F_DUPFD_CLOEXEC", 1031: "F_SETPIPE_SZ", 1032: "F_GETPIPE_SZ",
	1033: "F_ADD_SEALS", 1034: "F_GET_SEALS", 1035: "F_GET_RW_HINT", 1036: "F_SET_RW_HINT",
	1037: "F_GET_FILE_RW_HINT", 1038: "F_SET_FILE_RW_HINT"}

var kFcntlCmd = enumKind(fcntlCmds, "F_???")

var lockTypes = enum{0: "F_RDLCK", 1: "F_WRLCK", 2: "F_UNLCK"}
var seekWhence = enum{0: "SEEK_SET", 1: "SEEK_CUR", 2: "SEEK_END", 3: "SEEK_DATA", 4: "SEEK_HOLE"}
var seals = flagSet{{1, "F_SEAL_SEAL"}, {2, "F_SEAL_SHRINK"}, {4, "F_SEAL_GROW"}, {8, "F_SEAL_WRITE"}, {0x10, "F_SEAL_FUTURE_WRITE"}}

func (d *dec) flock(addr uint64, withPid bool) *parser.Expr {
	var fl unix.Flock_t
	if readStruct(d.pid, addr, &fl) != nil {
		return parser.Hex(addr)
	}
	f := []*parser.Arg{
		parser.Field("l_type", lockTypes.expr(uint64(uint16(fl.Type)), "")),
		parser.Field("l_whence", seekWhence.expr(uint64(uint16(fl.Whence)), "")),
		parser.Field("l_start", parser.Dec(fl.Start)),
		parser.Field("l_len", parser.Dec(fl.Len)),
	}
	if withPid {
		f = append(f, parser.Field("l_pid", parser.Dec(int64(fl.Pid))))
	}
	return parser.NewStruct(f...)
}

func isGetlk(cmd uint64) bool { return cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK }

// kFcntlArg prints at entry what the command passes in; F_GETLK's
// struct waits for the exit (late).
var kFcntlArg = kind{
	in: func(d *dec, i int) *parser.Arg {
		cmd := uint64(uint32(d.arg(1)))
		v := d.arg(i)
		switch cmd {
		case unix.F_GETFD, unix.F_GETFL, unix.F_GETOWN, unix.F_GETSIG, unix.F_GETLEASE, unix.F_GETPIPE_SZ, unix.F_GET_SEALS:
			return nil
		case unix.F_SETFD:
			return pos(flagSet{{1, "FD_CLOEXEC"}}.expr(v, ""))
		case unix.F_SETFL:
			return pos(openFlags(uint64(uint32(v))))
		case unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
			return pos(d.flock(v, false))
		case unix.F_GETLK, unix.F_OFD_GETLK:
			return nil
		case unix.F_SETLEASE:
			return pos(lockTypes.expr(v, ""))
		case unix.F_ADD_SEALS:
			return pos(seals.expr(v, ""))
		case unix.F_SETSIG:
			return pos(sigExpr(int64(int32(v))))
		}
		if _, ok := fcntlCmds[cmd]; !ok {
			return pos(parser.Hex(v))
		}
		return pos(parser.Dec(int64(int32(v))))
	},
	late: func(d *dec) bool { return isGetlk(uint64(uint32(d.arg(1)))) },
	out: func(d *dec, i int, a *parser.Arg) *parser.Arg {
		if !isGetlk(uint64(uint32(d.arg(1)))) {
			return a
		}
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.flock(d.arg(i), true))
	},
}

func retFcntl(d *dec) *parser.Result {
	cmd := uint64(uint32(d.arg(1)))
	switch cmd {
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		return retFD(d)
	case unix.F_GETFD:
		return flagsNote(d.ret, "flags", flagSet{{1, "FD_CLOEXEC"}}.names(uint64(d.ret)))
	case unix.F_GETFL:
		return flagsNote(d.ret, "flags", openFlags(uint64(d.ret)))
	case unix.F_GET_SEALS:
		return flagsNote(d.ret, "seals", seals.names(uint64(d.ret)))
	case unix.F_GETLEASE:
		r := parser.Ret(lockTypes.expr(uint64(d.ret), ""))
		return r
	}
	return retDec(d)
}

// flagsNote is "= 0x8002 (flags O_RDWR|O_LARGEFILE)"; zero is just 0.
func flagsNote(v int64, word string, names any) *parser.Result {
	if v == 0 {
		return parser.Ret(parser.Dec(0))
	}
	r := parser.Ret(parser.Hex(uint64(v)))
	var text string
	switch n := names.(type) {
	case []string:
		text = parser.Format(parser.Flags(n...))
	case *parser.Expr:
		text = parser.Format(n)
	}
	r.Outcome.Notes = []string{"(" + word + " " + text + ")"}
	return r
}
