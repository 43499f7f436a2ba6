package parser

import (
	"strconv"
	"strings"
)

// Builders for code that writes traces (the tracer) or edits them (the
// mutators). A built node has no source position, so it prints in strace's
// style; putting one into a parsed line makes the printer regenerate just
// that part of the line.

// Dec is a decimal number.
func Dec(n int64) *Expr { return X(&Int{Text: strconv.FormatInt(n, 10)}) }

// Udec is an unsigned decimal number.
func Udec(n uint64) *Expr { return X(&Int{Text: strconv.FormatUint(n, 10)}) }

// Hex is a number in strace's hex style (0x1f; 0 stays 0).
func Hex(n uint64) *Expr {
	if n == 0 {
		return X(&Int{Text: "0"})
	}
	return X(&Int{Text: "0x" + strconv.FormatUint(n, 16)})
}

// Oct is a number in octal with a leading zero, as strace prints modes.
func Oct(n uint64) *Expr { return X(&Int{Text: octal(n)}) }

func octal(n uint64) string { return "0" + strconv.FormatUint(n, 8) }

// FD is a file descriptor with its -y decoration (path may be "").
func FD(fd int64, path string) *Expr {
	i := &Int{Text: strconv.FormatInt(fd, 10)}
	if path != "" {
		i.Decor = &Decor{Text: path}
	}
	return X(i)
}

// Sym is a symbolic constant: O_RDONLY, NULL, AT_FDCWD.
func Sym(name string) *Expr { return X(&Ident{Name: name}) }

// Null is NULL.
func Null() *Expr { return Sym("NULL") }

// Quoted is a string, quoted in the given style, with "..." if truncated.
func Quoted(b []byte, style QuoteStyle, truncated bool) *Expr {
	return X(&Str{Quoted: Quote(b, style, truncated)})
}

// Flags joins symbols and numbers with '|': Flags("O_WRONLY", "O_CREAT").
// An empty set is the number 0, as strace prints it.
func Flags(names ...string) *Expr {
	if len(names) == 0 {
		return Dec(0)
	}
	e := X(term(names[0]))
	for _, n := range names[1:] {
		e.Tail = append(e.Tail, &BinOp{Op: "|", X: term(n)})
	}
	return e
}

func term(s string) Value {
	if s != "" && (isDigit(s[0]) || s[0] == '-') {
		return &Int{Text: s}
	}
	return &Ident{Name: s}
}

// Mode is a file mode as strace prints it: S_IFREG|0644, or 0644 alone.
func Mode(typ string, perm uint64) *Expr {
	if typ == "" {
		return Oct(perm)
	}
	return Flags(typ, octal(perm))
}

// CallExpr is a call expression such as makedev(0x8, 0x1) or htons(80).
func CallExpr(name string, args ...*Expr) *Expr {
	t := &Tuple{}
	for _, a := range args {
		t.Args = append(t.Args, &Arg{Value: a})
	}
	return X(&Ident{Name: name, Call: t})
}

// NewStruct is {a=1, b=2}; Field builds the members.
func NewStruct(fields ...*Arg) *Expr { return X(&Struct{Fields: fields}) }

// NewArray is [a, b].
func NewArray(elems ...*Expr) *Expr {
	a := &Array{}
	for _, e := range elems {
		a.Elems = append(a.Elems, &Arg{Value: e})
	}
	return X(a)
}

// NewBitSet is [INT TERM], or ~[...] when not is true.
func NewBitSet(not bool, bits ...string) *Expr {
	b := &BitSet{Not: not}
	for _, s := range bits {
		b.Bits = append(b.Bits, X(term(s)))
	}
	return X(b)
}

// Field is a named struct member or argument: st_size=42.
func Field(name string, v *Expr) *Arg { return &Arg{Name: Key(name), Value: v} }

// Positional is an unnamed argument.
func Positional(v *Expr) *Arg { return &Arg{Value: v} }

// InOut is an in/out argument: [128 => 16].
func InOut(in, out *Expr) *Arg { return &Arg{Value: in, Out: out} }

// More is the "..." that stands for left-out members.
func More() *Arg { return &Arg{Value: X(&Ellipsis{})} }

// X wraps an operand as an expression.
func X(v Value) *Expr { return &Expr{Head: v} }

// WithComment appends a /* comment */ to an expression's last operand.
func (e *Expr) WithComment(text string) *Expr {
	c := "/* " + text + " */"
	if n := len(e.Tail); n > 0 {
		e.Tail[n-1].Comment = c
	} else {
		e.Comment = c
	}
	return e
}

// Ret is a successful result.
func Ret(v *Expr) *Result { return &Result{Value: v} }

// Fail is "= -1 ERRNO (text)".
func Fail(errno, text string) *Result {
	r := &Result{Value: Dec(-1), Outcome: Outcome{Errno: errno}}
	if text != "" {
		r.Outcome.Notes = []string{"(" + text + ")"}
	}
	return r
}

// Unknown is "= ?", the result of a call that never returned.
func Unknown() *Result { return &Result{Unknown: true} }

// NewCall builds a complete call line body.
func NewCall(name string, args []*Arg, r *Result) *Call {
	return &Call{Name: name, Args: args, Result: r}
}

// NewLine wraps a body with its pid prefix (pid 0: none) in the style
// strace -f -o writes.
func NewLine(pid int, b Body) *Line { return &Line{Prefix: Prefix{Pid: Pid{N: pid}}, Body: b} }

// NewComment is a '#' line; text is written after "# ".
func NewComment(text string) *Line {
	return &Line{Body: &Comment{Text: "# " + strings.TrimRight(text, "\n")}}
}
