package tracer

import (
	"fmt"
	"time"

	"github.com/faultline/faultline/parser"
)

// Times, with the ISO 8601 comment strace adds to wall-clock values.

type timespec struct{ Sec, Nsec int64 }

// isoComment is strace's "2026-11-22T04:19:48.547512542+0000", without
// the fraction when it is zero.
func isoComment(sec, nsec int64) string {
	t := time.Unix(sec, nsec).Local()
	s := t.Format("2006-01-02T15:04:05")
	if nsec != 0 {
		s += fmt.Sprintf(".%09d", nsec)
	}
	return s + t.Format("-0700")
}

// tsStruct is {tv_sec=1, tv_nsec=2}.
func tsStruct(ts timespec) *parser.Expr {
	return parser.NewStruct(parser.Field("tv_sec", parser.Dec(ts.Sec)), parser.Field("tv_nsec", parser.Dec(ts.Nsec)))
}

func tvStruct(ts timespec) *parser.Expr {
	return parser.NewStruct(parser.Field("tv_sec", parser.Dec(ts.Sec)), parser.Field("tv_usec", parser.Dec(ts.Nsec)))
}

func (d *dec) timespec(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var ts timespec
	if readStruct(d.pid, addr, &ts) != nil {
		return parser.Hex(addr)
	}
	return tsStruct(ts)
}

func (d *dec) timeval(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var ts timespec
	if readStruct(d.pid, addr, &ts) != nil {
		return parser.Hex(addr)
	}
	return tvStruct(ts)
}

const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

var (
	kTimespec    = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.timespec(d.arg(i))) }}
	kTimespecOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.timespec(d.arg(i)))
	}}
	kTimevalOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.timeval(d.arg(i)))
	}}
	// kRemain is nanosleep's remainder, printed only when interrupted.
	kRemain = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.arg(i) == 0 || !d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.timespec(d.arg(i)))
	}}
	// kUtimes is utimensat's pair of times.
	kUtimes = kind{in: func(d *dec, i int) *parser.Arg {
		addr := d.arg(i)
		if addr == 0 {
			return pos(parser.Null())
		}
		var ts [2]timespec
		if readStruct(d.pid, addr, &ts) != nil {
			return pos(parser.Hex(addr))
		}
		var el []*parser.Expr
		for _, t := range ts {
			switch t.Nsec {
			case utimeNow:
				el = append(el, parser.NewStruct(parser.Field("tv_sec", parser.Dec(t.Sec)), parser.Field("tv_nsec", parser.Sym("UTIME_NOW"))))
			case utimeOmit:
				el = append(el, parser.NewStruct(parser.Field("tv_sec", parser.Dec(t.Sec)), parser.Field("tv_nsec", parser.Sym("UTIME_OMIT"))))
			default:
				el = append(el, tsStruct(t).WithComment(isoComment(t.Sec, t.Nsec)))
			}
		}
		return pos(parser.NewArray(el...))
	}}
)

// time(2) returns the clock with its date.
func retTime(d *dec) *parser.Result {
	r := parser.Ret(parser.Dec(d.ret))
	r.Outcome.Notes = []string{"(" + isoComment(d.ret, 0) + ")"}
	return r
}

var kTimeOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
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

// clockTicks prints a clock_t as strace does: the count, and when it is
// not zero the seconds it makes at USER_HZ (100 ticks a second on every
// Linux ABI) in a comment, "1 /* 0.01 s */".
func clockTicks(v uint64) *parser.Expr {
	e := parser.Udec(v)
	if v == 0 {
		return e
	}
	return e.WithComment(fmt.Sprintf("%d.%02d s", v/100, v%100))
}
