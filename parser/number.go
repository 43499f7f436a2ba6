package parser

import (
	"strconv"
	"strings"
)

// Int64 returns the number's value in whatever base strace wrote it; false
// for fractions and numbers out of range.
func (i *Int) Int64() (int64, bool) {
	v, err := strconv.ParseInt(i.Text, 0, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(i.Text, 0, 64)
		if uerr != nil {
			return 0, false
		}
		return int64(u), true
	}
	return v, true
}

// Uint64 returns the number as unsigned (addresses, masks).
func (i *Int) Uint64() (uint64, bool) {
	if strings.HasPrefix(i.Text, "-") {
		v, ok := i.Int64()
		return uint64(v), ok
	}
	u, err := strconv.ParseUint(i.Text, 0, 64)
	return u, err == nil
}

// Flags returns the members of a flag set ("O_WRONLY|O_CREAT|0644" gives
// O_WRONLY, O_CREAT, 0644), or nil when the expression is not one.
func (e *Expr) Flags() []string {
	if e == nil {
		return nil
	}
	out := []string{operandText(e.Head)}
	for _, t := range e.Tail {
		if t.Op != "|" {
			return nil
		}
		out = append(out, operandText(t.X))
	}
	for _, s := range out {
		if s == "" {
			return nil
		}
	}
	return out
}

// HasFlag reports whether a flag set names the flag.
func (e *Expr) HasFlag(name string) bool {
	for _, f := range e.Flags() {
		if f == name {
			return true
		}
	}
	return false
}

func operandText(v Value) string {
	switch v := v.(type) {
	case *Ident:
		if v.Call == nil {
			return v.Name
		}
	case *Int:
		return v.Text
	}
	return ""
}

// Bytes decodes a string value; truncated reports strace's "...".
func (s *Str) Bytes() (b []byte, truncated bool, err error) {
	b, err = Unquote(s.Quoted)
	return b, strings.HasSuffix(s.Quoted, "..."), err
}

// Field returns the struct member with the given name, or nil.
func (s *Struct) Field(name string) *Arg {
	for _, f := range s.Fields {
		if string(f.Name) == name {
			return f
		}
	}
	return nil
}
