package tracer

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Encoding is the inverse of decoding: it reads the values of a trace
// line (possibly edited by hand) back into the numbers, bit masks and
// bytes the kernel ABI holds, so Patch can compare them with what the
// kernel gave and write them into the tracee. Every helper accepts what
// the decoders in this package print, and what a person is likely to
// type in their place (a number where a name was, any base).

// intOf is a plain number: 42, -1, 0x1f, 0644, with or without a
// comment after it.
func intOf(e *parser.Expr) (int64, error) {
	if e == nil {
		return 0, fmt.Errorf("no value")
	}
	n, ok := e.Head.(*parser.Int)
	if !ok || len(e.Tail) > 0 {
		return 0, fmt.Errorf("%s is not a number", parser.Format(e))
	}
	v, ok := n.Int64()
	if !ok {
		return 0, fmt.Errorf("%s is not a number", parser.Format(e))
	}
	return v, nil
}

// uintOf is intOf for unsigned fields; a negative number is an error.
func uintOf(e *parser.Expr) (uint64, error) {
	if e == nil {
		return 0, fmt.Errorf("no value")
	}
	n, ok := e.Head.(*parser.Int)
	if !ok || len(e.Tail) > 0 {
		return 0, fmt.Errorf("%s is not a number", parser.Format(e))
	}
	if strings.HasPrefix(n.Text, "-") {
		return 0, fmt.Errorf("%s is negative", n.Text)
	}
	v, ok := n.Uint64()
	if !ok {
		return 0, fmt.Errorf("%s is not a number", parser.Format(e))
	}
	return v, nil
}

// numText parses one member of a flag set that is a number, in C's
// bases (0644 is octal, 0x1f hex).
func numText(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 0, 64)
	return v, err == nil
}

// flagsOf is the value of a flag set printed from table fs: names and
// numbers joined by '|' (STATX_BASIC_STATS|STATX_MNT_ID, 0, 0x4000).
func flagsOf(e *parser.Expr, fs flagSet) (uint64, error) {
	names := e.Flags()
	if names == nil {
		return 0, fmt.Errorf("%s is not a flag set", parser.Format(e))
	}
	var v uint64
next:
	for _, n := range names {
		if x, ok := numText(n); ok {
			v |= x
			continue
		}
		for _, f := range fs {
			if f.name == n {
				v |= f.v
				continue next
			}
		}
		return 0, fmt.Errorf("unknown flag %s in %s", n, parser.Format(e))
	}
	return v, nil
}

var modeBits = flagSet{{unix.S_ISUID, "S_ISUID"}, {unix.S_ISGID, "S_ISGID"}, {unix.S_ISVTX, "S_ISVTX"}}

// modeOf is a file mode as modeExpr prints it: S_IFCHR|S_ISUID|0644, or
// the permissions alone.
func modeOf(e *parser.Expr) (uint32, error) {
	names := e.Flags()
	if names == nil {
		return 0, fmt.Errorf("%s is not a file mode", parser.Format(e))
	}
	var v uint64
	types := 0
next:
	for _, n := range names {
		if x, ok := numText(n); ok {
			v |= x
			continue
		}
		for t, name := range fileTypes {
			if name == n {
				v |= t
				types++
				continue next
			}
		}
		for _, f := range modeBits {
			if f.name == n {
				v |= f.v
				continue next
			}
		}
		return 0, fmt.Errorf("unknown mode bit %s in %s", n, parser.Format(e))
	}
	if types > 1 {
		return 0, fmt.Errorf("%s names more than one file type", parser.Format(e))
	}
	if v > 0xffffffff {
		return 0, fmt.Errorf("%s does not fit a mode", parser.Format(e))
	}
	return uint32(v), nil
}

// devOf is a device number: makedev(0x8, 0x1) as strace prints it, or a
// raw number.
func devOf(e *parser.Expr) (uint64, error) {
	if e == nil {
		return 0, fmt.Errorf("no value")
	}
	if id, ok := e.Head.(*parser.Ident); ok && len(e.Tail) == 0 && id.Name == "makedev" && id.Call != nil {
		if len(id.Call.Args) != 2 {
			return 0, fmt.Errorf("%s: makedev takes two numbers", parser.Format(e))
		}
		major, err := uintOf(id.Call.Args[0].Value)
		if err != nil {
			return 0, fmt.Errorf("major of %s: %w", parser.Format(e), err)
		}
		minor, err := uintOf(id.Call.Args[1].Value)
		if err != nil {
			return 0, fmt.Errorf("minor of %s: %w", parser.Format(e), err)
		}
		if major > 0xffffffff || minor > 0xffffffff {
			return 0, fmt.Errorf("%s: major or minor out of range", parser.Format(e))
		}
		return unix.Mkdev(uint32(major), uint32(minor)), nil
	}
	return uintOf(e)
}

// strOf is a quoted string's bytes and whether strace truncated it
// ("..."); ok is false when the value is not a string (an address,
// NULL: the recorder could not read the buffer).
func strOf(e *parser.Expr) (b []byte, truncated, ok bool, err error) {
	if e == nil || len(e.Tail) > 0 {
		return nil, false, false, nil
	}
	s, isStr := e.Head.(*parser.Str)
	if !isStr {
		return nil, false, false, nil
	}
	b, truncated, err = s.Bytes()
	if err != nil {
		return nil, false, true, fmt.Errorf("string %s: %w", s.Quoted, err)
	}
	return b, truncated, true, nil
}

// structOf is the struct a value holds, or nil (an address or NULL).
func structOf(e *parser.Expr) *parser.Struct {
	if e == nil || len(e.Tail) > 0 {
		return nil
	}
	s, _ := e.Head.(*parser.Struct)
	return s
}

// arrayOf is the array a value holds, or nil.
func arrayOf(e *parser.Expr) *parser.Array {
	if e == nil || len(e.Tail) > 0 {
		return nil
	}
	a, _ := e.Head.(*parser.Array)
	return a
}

// symOf is a bare symbolic name (DT_REG), or "".
func symOf(e *parser.Expr) string {
	if e == nil || len(e.Tail) > 0 {
		return ""
	}
	if id, ok := e.Head.(*parser.Ident); ok && id.Call == nil {
		return id.Name
	}
	return ""
}

// enumOf is a value of an enumeration printed from table en: its name or
// a number.
func enumOf(e *parser.Expr, en enum) (uint64, error) {
	if n := symOf(e); n != "" {
		for v, name := range en {
			if name == n {
				return v, nil
			}
		}
		return 0, fmt.Errorf("unknown name %s", n)
	}
	return uintOf(e)
}

var (
	errnoOnce   sync.Once
	errnoByName map[string]int64
)

// errnoOf is the errno a failed result names: EIO, ERESTARTSYS, or a
// bare negative number strace printed for one it has no name for.
func errnoOf(r *parser.Result) (int64, error) {
	if r.Outcome.Errno == "" {
		v, ok := r.Int()
		if !ok || v >= 0 || v < -4095 {
			return 0, fmt.Errorf("result %s is not an error", parser.Format(r.Value))
		}
		return -v, nil
	}
	errnoOnce.Do(func() {
		errnoByName = map[string]int64{}
		for e := unix.Errno(1); e < 4096; e++ {
			if n := unix.ErrnoName(e); n != "" {
				errnoByName[n] = int64(e)
			}
			if name, _, ok := restartErrno(e); ok {
				errnoByName[name] = int64(e)
			}
		}
		// The names strace prints where x/sys has an alias, and the
		// aliases people type.
		for _, e := range []unix.Errno{unix.EOPNOTSUPP, unix.EAGAIN, unix.EDEADLK} {
			errnoByName[errnoName(e)] = int64(e)
		}
		errnoByName["EWOULDBLOCK"] = int64(unix.EAGAIN)
		errnoByName["EDEADLOCK"] = int64(unix.EDEADLK)
		errnoByName["ENOTSUP"] = int64(unix.EOPNOTSUPP)
	})
	v, ok := errnoByName[r.Outcome.Errno]
	if !ok {
		return 0, fmt.Errorf("unknown errno %s", r.Outcome.Errno)
	}
	return v, nil
}

// wantRet is the raw value a result stands for: the number, or the
// negated errno of a failure; ok is false for "= ?" and values that are
// not numbers.
func wantRet(r *parser.Result) (int64, bool, error) {
	if r == nil {
		return 0, false, nil
	}
	if r.Failed() {
		e, err := errnoOf(r)
		if err != nil {
			return 0, false, err
		}
		return -e, true, nil
	}
	if r.Unknown {
		return 0, false, nil
	}
	v, ok := r.Int()
	return v, ok, nil
}

// retText is a raw result as the trace prints it: "5", "-1 EIO
// (Input/output error)".
func retText(ret int64) string {
	if ret >= 0 || ret < -4095 {
		return strconv.FormatInt(ret, 10)
	}
	r := errnoResult(unix.Errno(-ret))
	s := "?"
	if r.Value != nil {
		s = parser.Format(r.Value)
	}
	if r.Outcome.Errno != "" {
		s += " " + r.Outcome.Errno
	}
	for _, n := range r.Outcome.Notes {
		s += " " + n
	}
	return s
}

// commentText is what a "/* ... */" comment says.
func commentText(c string) string {
	c = strings.TrimPrefix(c, "/*")
	c = strings.TrimSuffix(c, "*/")
	return strings.TrimSpace(c)
}

// writeStruct writes a fixed-size kernel structure into the tracee.
func writeStruct[T any](pid int, addr uint64, v *T) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
	return writeMem(pid, addr, b)
}

// quoteShort prints bytes for a description, cut to a readable length.
func quoteShort(b []byte) string {
	const max = 40
	if len(b) > max {
		return parser.Quote(b[:max], parser.QuoteDefault, true)
	}
	return parser.Quote(b, parser.QuoteDefault, false)
}
