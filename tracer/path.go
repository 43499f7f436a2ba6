package tracer

import (
	"github.com/faultline/faultline/parser"
)

// Paths are printed whole (up to PATH_MAX), whatever -s says.

const pathMax = 4096

var (
	kPath = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.path(d.arg(i))) }}
	// kPathOut is a path the kernel writes (getcwd, readlink), ret bytes.
	kPathOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		if d.name == "getcwd" {
			// A path, printed whole; the count includes its NUL.
			return pos(d.pathN(d.arg(i), int(d.ret)-1))
		}
		return pos(d.buf(d.arg(i), int(d.ret), false, parser.QuoteDefault))
	}}
)

func (d *dec) path(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	b, ok, err := readCString(d.pid, addr, pathMax)
	if err != nil {
		return parser.Hex(addr)
	}
	return parser.Quoted(b, parser.QuoteDefault, !ok)
}

// pathN is a path of n bytes, printed whole.
func (d *dec) pathN(addr uint64, n int) *parser.Expr {
	if n < 0 {
		n = 0
	}
	if n > pathMax {
		n = pathMax
	}
	b := make([]byte, n)
	if readFull(d.pid, addr, b) != nil {
		return parser.Hex(addr)
	}
	return parser.Quoted(b, parser.QuoteDefault, false)
}

// cstr is a NUL-terminated string limited by -s.
func (d *dec) cstr(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	max := d.t.c.StringLimit
	b, ok, err := readCString(d.pid, addr, max+1)
	if err != nil {
		return parser.Hex(addr)
	}
	trunc := !ok
	if len(b) > max {
		b = b[:max]
		trunc = true
	}
	return parser.Quoted(b, parser.QuoteDefault, trunc)
}

// buf is n bytes at addr limited by -s, with "..." when there was more.
// zeroTerm stops at a NUL as strace does for strings it knows are C
// strings.
func (d *dec) buf(addr uint64, n int, zeroTerm bool, style parser.QuoteStyle) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	if n < 0 {
		n = 0
	}
	max := d.t.c.StringLimit
	want := n
	if want > max {
		want = max
	}
	b := make([]byte, want)
	if err := readFull(d.pid, addr, b); err != nil {
		return parser.Hex(addr)
	}
	trunc := n > max
	if zeroTerm {
		for i, c := range b {
			if c == 0 {
				b = b[:i]
				trunc = false
				break
			}
		}
	}
	return parser.Quoted(b, style, trunc)
}

var (
	// kBufIn is a buffer the program passes, sized by the next argument.
	kBufIn = kind{in: func(d *dec, i int) *parser.Arg {
		return pos(d.buf(d.arg(i), int(d.arg(i+1)), false, parser.QuoteDefault))
	}}
	// kBufOut is a buffer the kernel fills, ret bytes of it.
	kBufOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.buf(d.arg(i), int(d.ret), false, parser.QuoteDefault))
	}}
	kCStr = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.cstr(d.arg(i))) }}
)
