package tracer

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/parser"
)

// ioctl: request names and the arguments of the common tty and file
// requests; others print strace's _IOC(...) and the raw argument.

var ioctlNames = map[uint64]string{
	0x5401: "TCGETS", 0x5402: "TCSETS", 0x5403: "TCSETSW", 0x5404: "TCSETSF", 0x5405: "TCGETA", 0x5406: "TCSETA",
	0x5407: "TCSETAW", 0x5408: "TCSETAF", 0x5409: "TCSBRK", 0x540a: "TCXONC", 0x540b: "TCFLSH", 0x540c: "TIOCEXCL",
	0x540d: "TIOCNXCL", 0x540e: "TIOCSCTTY", 0x540f: "TIOCGPGRP", 0x5410: "TIOCSPGRP", 0x5411: "TIOCOUTQ",
	0x5412: "TIOCSTI", 0x5413: "TIOCGWINSZ", 0x5414: "TIOCSWINSZ", 0x5415: "TIOCMGET", 0x5416: "TIOCMBIS",
	0x5417: "TIOCMBIC", 0x5418: "TIOCMSET", 0x541b: "FIONREAD", 0x541c: "TIOCLINUX", 0x541d: "TIOCCONS",
	0x5420: "TIOCPKT", 0x5421: "FIONBIO", 0x5422: "TIOCNOTTY", 0x5423: "TIOCSETD", 0x5424: "TIOCGETD",
	0x5427: "TIOCSBRK", 0x5428: "TIOCCBRK", 0x5429: "TIOCGSID", 0x80045430: "TIOCGPTN", 0x40045431: "TIOCSPTLCK",
	0x5450: "FIONCLEX", 0x5451: "FIOCLEX", 0x5452: "FIOASYNC", 0x5460: "FIOQSIZE",
	0x40049409: "BTRFS_IOC_CLONE or FICLONE", 0x4020940d: "BTRFS_IOC_CLONE_RANGE or FICLONERANGE",
	0xc0189436: "FIDEDUPERANGE", 0x80086601: "FS_IOC_GETFLAGS", 0x40086602: "FS_IOC_SETFLAGS",
	0x80087601: "FS_IOC_GETVERSION", 1: "FIBMAP", 2: "FIGETBSZ", 0x541e: "TIOCGSERIAL", 0xc020660b: "FS_IOC_FIEMAP",
	0x80081272: "BLKGETSIZE64", 0x1260: "BLKGETSIZE", 0x1268: "BLKSSZGET",
}

func ioctlReq(v uint64) *parser.Expr {
	v = uint64(uint32(v))
	if n, ok := ioctlNames[v]; ok {
		if a, b, ok := strings.Cut(n, " or "); ok {
			e := parser.Sym(a)
			e.Tail = []*parser.BinOp{{Op: "or", X: &parser.Ident{Name: b}}}
			return e
		}
		return parser.Sym(n)
	}
	dir := []string{"_IOC_NONE", "_IOC_WRITE", "_IOC_READ", "_IOC_READ|_IOC_WRITE"}[v>>30]
	return parser.CallExpr("_IOC", parser.Flags(strings.Split(dir, "|")...), parser.Hex((v>>8)&0xff), parser.Hex(v&0xff), parser.Hex((v>>16)&0x3fff))
}

var kIoctlReq = kind{in: func(d *dec, i int) *parser.Arg { return pos(ioctlReq(d.arg(i))) }}

// ioctl arguments read at exit (the kernel fills them).
func ioctlOutReq(req uint64) bool {
	switch uint32(req) {
	case 0x5401, 0x5413, 0x541b, 0x540f, 0x5411, 0x5429, 0x80045430, 0x80086601, 0x80081272, 0x1268, 2:
		return true
	}
	return false
}

var kIoctlArg = kind{
	in: func(d *dec, i int) *parser.Arg {
		req := uint64(uint32(d.arg(1)))
		v := d.arg(i)
		if ioctlOutReq(req) {
			return nil
		}
		switch req {
		case 0x40049409, 0x540e, 0x5409, 0x540a, 0x540b:
			return pos(parser.Dec(int64(int32(v))))
		case 0x5421, 0x5410, 0x40045431, 0x5452:
			return pos(d.intAt(v))
		case 0x5450, 0x5451, 0x5422:
			return nil
		case 0x5414:
			return pos(d.winsize(v))
		}
		return pos(ptr(v))
	},
	late: func(d *dec) bool { return ioctlOutReq(d.arg(1)) },
	out: func(d *dec, i int, a *parser.Arg) *parser.Arg {
		v := d.arg(i)
		if d.failed() || v == 0 {
			return pos(ptr(v))
		}
		switch uint32(d.arg(1)) {
		case 0x5413:
			return pos(d.winsize(v))
		case 0x5401:
			return pos(d.termios(v))
		case 0x80081272:
			w, err := readWord(d.pid, v)
			if err != nil {
				return pos(parser.Hex(v))
			}
			return pos(parser.NewArray(parser.Udec(w)))
		}
		return pos(d.intAt(v))
	},
}

func (d *dec) intAt(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var b [4]byte
	if readFull(d.pid, addr, b[:]) != nil {
		return parser.Hex(addr)
	}
	return parser.NewArray(parser.Dec(int64(int32(le32(b[:])))))
}

func (d *dec) winsize(addr uint64) *parser.Expr {
	var ws [4]uint16
	if readStruct(d.pid, addr, &ws) != nil {
		return parser.Hex(addr)
	}
	return parser.NewStruct(parser.Field("ws_row", parser.Udec(uint64(ws[0]))), parser.Field("ws_col", parser.Udec(uint64(ws[1]))),
		parser.Field("ws_xpixel", parser.Udec(uint64(ws[2]))), parser.Field("ws_ypixel", parser.Udec(uint64(ws[3]))))
}

// termios as strace prints it without -v: the four mode words.
func (d *dec) termios(addr uint64) *parser.Expr {
	var t struct {
		Iflag, Oflag, Cflag, Lflag uint32
		Line                       uint8
		Cc                         [19]uint8
	}
	if readStruct(d.pid, addr, &t) != nil {
		return parser.Hex(addr)
	}
	speeds := enum{0: "B0", 1: "B50", 2: "B75", 3: "B110", 4: "B134", 5: "B150", 6: "B200", 7: "B300", 8: "B600", 9: "B1200",
		10: "B1800", 11: "B2400", 12: "B4800", 13: "B9600", 14: "B19200", 15: "B38400", 0x1001: "B57600", 0x1002: "B115200",
		0x1003: "B230400", 0x1004: "B460800", 0x1005: "B500000", 0x1006: "B576000", 0x1007: "B921600", 0x1008: "B1000000"}
	iflag := flagSet{{1, "IGNBRK"}, {2, "BRKINT"}, {4, "IGNPAR"}, {8, "PARMRK"}, {0x10, "INPCK"}, {0x20, "ISTRIP"}, {0x40, "INLCR"},
		{0x80, "IGNCR"}, {0x100, "ICRNL"}, {0x200, "IUCLC"}, {0x400, "IXON"}, {0x800, "IXANY"}, {0x1000, "IXOFF"}, {0x2000, "IMAXBEL"}, {0x4000, "IUTF8"}}
	lflag := flagSet{{1, "ISIG"}, {2, "ICANON"}, {4, "XCASE"}, {8, "ECHO"}, {0x10, "ECHOE"}, {0x20, "ECHOK"}, {0x40, "ECHONL"},
		{0x80, "NOFLSH"}, {0x100, "TOSTOP"}, {0x200, "ECHOCTL"}, {0x400, "ECHOPRT"}, {0x800, "ECHOKE"}, {0x1000, "FLUSHO"},
		{0x4000, "PENDIN"}, {0x8000, "IEXTEN"}, {0x10000, "EXTPROC"}}
	oflags := []string{
		[]string{"NL0", "NL1"}[(t.Oflag>>8)&1], []string{"CR0", "CR1", "CR2", "CR3"}[(t.Oflag>>9)&3],
		[]string{"TAB0", "TAB1", "TAB2", "TAB3"}[(t.Oflag>>11)&3], []string{"BS0", "BS1"}[(t.Oflag>>13)&1],
		[]string{"VT0", "VT1"}[(t.Oflag>>14)&1], []string{"FF0", "FF1"}[(t.Oflag>>15)&1],
	}
	oflags = append(oflags, flagSet{{1, "OPOST"}, {2, "OLCUC"}, {4, "ONLCR"}, {8, "OCRNL"}, {0x10, "ONOCR"}, {0x20, "ONLRET"}, {0x40, "OFILL"}, {0x80, "OFDEL"}}.names(uint64(t.Oflag&0xff))...)
	speed, ok := speeds[uint64(t.Cflag&0x100f)]
	if !ok {
		speed = fmt.Sprintf("%#x", t.Cflag&0x100f)
	}
	cflags := []string{speed}
	cflags = append(cflags, []string{"CS5", "CS6", "CS7", "CS8"}[(t.Cflag>>4)&3])
	cflags = append(cflags, flagSet{{0x40, "CSTOPB"}, {0x80, "CREAD"}, {0x100, "PARENB"}, {0x200, "PARODD"}, {0x400, "HUPCL"}, {0x800, "CLOCAL"}, {0x80000000, "CRTSCTS"}}.names(uint64(t.Cflag&^0x100f&^0x30))...)
	lf := lflag.expr(uint64(t.Lflag), "")
	return parser.NewStruct(
		parser.Field("c_iflag", iflag.expr(uint64(t.Iflag), "")),
		parser.Field("c_oflag", parser.Flags(oflags...)),
		parser.Field("c_cflag", parser.Flags(cflags...)),
		parser.Field("c_lflag", lf),
		parser.More())
}
