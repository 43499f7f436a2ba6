package mutators

import (
	"fmt"

	"github.com/faultline/faultline/parser"
)

// Building blocks for mutations: tests on calls and edits of results and
// out-parameters. The catalogue composes them.

// Named matches calls by name.
func Named(names ...string) func(*Call) bool {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return func(c *Call) bool { return set[c.Name] }
}

// Succeeded matches calls that returned without an error.
func Succeeded(c *Call) bool { return c.Succeeded() }

// All combines call tests: every one must hold.
func All(tests ...func(*Call) bool) func(*Site) bool {
	return func(s *Site) bool {
		for _, t := range tests {
			if !t(s.Call) {
				return false
			}
		}
		return true
	}
}

// FailWith is an edit that makes the call fail with the errno, printed as
// strace prints it ("= -1 ENOSPC (No space left on device)").
func FailWith(errno, text string) func(*Site) error {
	return func(s *Site) error {
		s.SetResult(parser.Fail(errno, text))
		return nil
	}
}

// SetReturn is an edit that replaces a numeric result by fn(old).
func SetReturn(fn func(old int64) int64) func(*Site) error {
	return func(s *Site) error {
		old, ok := s.Edit().Result.Int()
		if !ok {
			return fmt.Errorf("result is not a number")
		}
		s.SetResult(parser.Ret(parser.Dec(fn(old))))
		return nil
	}
}

// StatStruct returns the stat-family structure a call filled in (the
// argument holding st_mode or stx_mode), or nil.
func StatStruct(args []*parser.Arg) *parser.Struct {
	for _, a := range args {
		for _, e := range []*parser.Expr{a.Out, a.Value} {
			if e == nil {
				continue
			}
			if st, ok := e.Head.(*parser.Struct); ok && (st.Field("st_mode") != nil || st.Field("stx_mode") != nil) {
				return st
			}
		}
	}
	return nil
}

// ModeField returns the mode member of a stat structure.
func ModeField(st *parser.Struct) *parser.Arg {
	if f := st.Field("st_mode"); f != nil {
		return f
	}
	return st.Field("stx_mode")
}

// FileType is the S_IF* member of a mode ("S_IFREG"), or "".
func FileType(mode *parser.Expr) string {
	for _, f := range mode.Flags() {
		if len(f) > 4 && f[:4] == "S_IF" {
			return f
		}
	}
	return ""
}

// SetFileType replaces the S_IF* member of a mode, keeping the others.
func SetFileType(field *parser.Arg, typ string) {
	flags := field.Value.Flags()
	for i, f := range flags {
		if len(f) > 4 && f[:4] == "S_IF" {
			flags[i] = typ
		}
	}
	field.Value = parser.Flags(flags...)
}

// FieldInt is a stat structure's numeric member.
func FieldInt(st *parser.Struct, name string) (int64, bool) {
	f := st.Field(name)
	if f == nil || f.Value == nil || len(f.Value.Tail) > 0 {
		return 0, false
	}
	n, ok := f.Value.Head.(*parser.Int)
	if !ok {
		return 0, false
	}
	return n.Int64()
}

// SetFieldInt replaces a numeric member, decimal as strace prints sizes,
// counts and inode numbers.
func SetFieldInt(st *parser.Struct, name string, v int64) error {
	f := st.Field(name)
	if f == nil {
		return fmt.Errorf("the structure has no %s", name)
	}
	f.Value = parser.Dec(v)
	return nil
}

// ArgText is an argument printed as strace would.
func ArgText(a *parser.Arg) string { return parser.Format(a) }
