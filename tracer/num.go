package tracer

import (
	"strconv"

	"github.com/faultline/faultline/parser"
)

// Numbers as C types: strace prints an int from the low 32 bits of its
// register, a long or size_t from all 64.

var (
	kInt   = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Dec(d.int32(i))) }}
	kUint  = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Udec(uint64(uint32(d.arg(i))))) }}
	kLong  = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Dec(int64(d.arg(i)))) }}
	kUlong = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Udec(d.arg(i))) }}
	kHex   = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Hex(d.arg(i))) }}
	kPtr   = kind{in: func(d *dec, i int) *parser.Arg { return pos(ptr(d.arg(i))) }}
	kMode  = kind{in: func(d *dec, i int) *parser.Arg { return pos(octMode(uint32(d.arg(i)))) }}
	// kOutPtr is an out-parameter strace does not decode: its address,
	// printed at exit.
	kOutPtr = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg { return pos(ptr(d.arg(i))) }}
	// kIntX is an int printed in hex (rseq's signature).
	kIntX = kind{in: func(d *dec, i int) *parser.Arg { return pos(parser.Hex(uint64(uint32(d.arg(i))))) }}
	// Sizes printed at exit because an out-argument precedes them.
	kUlongOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg { return pos(parser.Udec(d.arg(i))) }}
	kIntOut   = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg { return pos(parser.Dec(d.int32(i))) }}
)

func pos(e *parser.Expr) *parser.Arg { return parser.Positional(e) }

// ptr is an address: NULL or hex.
func ptr(v uint64) *parser.Expr {
	if v == 0 {
		return parser.Null()
	}
	return parser.Hex(v)
}

// octMode is strace's "%#03o": 000, 022, 0644.
func octMode(v uint32) *parser.Expr {
	return parser.X(&parser.Int{Text: octText(uint64(v))})
}

func octText(v uint64) string {
	s := strconv.FormatUint(v, 8)
	for len(s) < 2 {
		s = "0" + s
	}
	return "0" + s
}
