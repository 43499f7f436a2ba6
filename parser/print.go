package parser

import (
	"fmt"
	"io"
	"reflect"
	"strings"
)

// resultColumn is strace's default alignment column for " = " (-a 40).
const resultColumn = 40

// printer renders lines. A parsed node whose subtree is untouched is copied
// from the source line, so printing a parsed trace gives back its bytes; a
// node that was built or edited is printed in strace's own style, and the
// text around it (its parent's separators, the padding before " = ") still
// comes from the source where there is one.
type printer struct {
	buf       []byte
	raw       string
	lineStart int
}

// String renders the line without its newline.
func (l *Line) String() string {
	var p printer
	p.line(l)
	return string(p.buf)
}

// Fprint writes the line and its newline (unless the source line had none).
func Fprint(w io.Writer, l *Line) error {
	var p printer
	p.line(l)
	if !l.NoEOL {
		p.buf = append(p.buf, '\n')
	}
	_, err := w.Write(p.buf)
	return err
}

// Format prints any node on its own in strace's style, as the tracer does
// for the values it decodes.
func Format(n node) string {
	var p printer
	p.node(n)
	return string(p.buf)
}

func (p *printer) line(l *Line) {
	p.raw = l.Raw
	p.lineStart = len(p.buf)
	if l.Raw != "" && p.clean(l) {
		p.str(l.Raw)
		return
	}
	if l.Raw != "" && !l.edited && (l.Body == nil || p.hasSpan(l.Body.header())) {
		if l.Body == nil {
			p.str(l.Raw)
			return
		}
		h := l.Body.header()
		p.str(l.Raw[:h.Pos.Offset])
		p.node(l.Body)
		p.str(l.Raw[p.end(h):])
		return
	}
	p.raw = ""
	l.canon(p)
}

func (p *printer) str(s string) { p.buf = append(p.buf, s...) }

func (p *printer) hasSpan(h *Node) bool {
	return p.raw != "" && h.Pos.Line > 0 && h.EndPos.Offset <= len(p.raw) && h.Pos.Offset <= h.EndPos.Offset
}

// end is where a node's own text stops: EndPos is the start of the next
// token, so the blanks before it are not the node's.
func (p *printer) end(h *Node) int {
	e := h.EndPos.Offset
	for e > h.Pos.Offset && (p.raw[e-1] == ' ' || p.raw[e-1] == '\t') {
		e--
	}
	return e
}

func (p *printer) clean(n node) bool {
	h := n.header()
	if h.edited || !p.hasSpan(h) {
		return false
	}
	ok := true
	n.children(func(c node) {
		if ok && !p.clean(c) {
			ok = false
		}
	})
	return ok
}

func (p *printer) node(n node) {
	if isNil(n) {
		return
	}
	h := n.header()
	if !h.edited && p.hasSpan(h) {
		if p.clean(n) {
			p.str(p.raw[h.Pos.Offset:p.end(h)])
			return
		}
		if p.patchable(n) {
			cur := h.Pos.Offset
			n.children(func(c node) {
				if p.clean(c) {
					return
				}
				ch := c.header()
				p.str(p.raw[cur:ch.Pos.Offset])
				p.node(c)
				cur = p.end(ch)
			})
			p.str(p.raw[cur:p.end(h)])
			return
		}
	}
	n.canon(p)
}

// patchable reports whether every child still has its source span, so the
// parent's own text between them can be kept.
func (p *printer) patchable(n node) bool {
	ok := true
	n.children(func(c node) {
		if ok && !p.hasSpan(c.header()) {
			ok = false
		}
	})
	return ok
}

// isNil is true for a nil interface and for a typed nil pointer in one
// (an optional child that was never set).
func isNil(n node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// tabto pads to the result column as strace does before "= ".
func (p *printer) tabto() {
	col := len(p.buf) - p.lineStart
	for ; col < resultColumn; col++ {
		p.buf = append(p.buf, ' ')
	}
}

func (p *printer) args(args []*Arg) {
	for i, a := range args {
		if i > 0 {
			p.str(", ")
		}
		p.node(a)
	}
}

// The canonical form of each node, in strace's style.

func (l *Line) canon(p *printer) {
	switch {
	case l.Prefix.Pid.N == 0:
	case l.Prefix.Pid.Bracket:
		fmt.Fprintf(sbuf{p}, "[pid %5d] ", l.Prefix.Pid.N)
	default:
		fmt.Fprintf(sbuf{p}, "%-5d ", l.Prefix.Pid.N)
	}
	if t := l.Prefix.Time; t != "" {
		// -r stamps are "%6ld.%06ld"; -t/-tt/-ttt ones have no padding.
		for n := len(t); n < 13 && !strings.Contains(t, ":"); n++ {
			p.str(" ")
		}
		p.str(t)
		p.str(" ")
	}
	p.node(l.Body)
}

// sbuf lets fmt write into the printer.
type sbuf struct{ p *printer }

func (s sbuf) Write(b []byte) (int, error) { s.p.buf = append(s.p.buf, b...); return len(b), nil }

func (c *Call) canon(p *printer) {
	p.str(c.Name)
	p.str("(")
	p.args(c.Args)
	p.pending(c.Pending, len(c.Args) > 0)
	p.close(c.Result)
}

func (p *printer) pending(pd Pending, hasArgs bool) {
	if pd == "" {
		return
	}
	if pd.Comma() && hasArgs {
		p.str(",")
	}
	p.str(" ")
	if pd.Comma() && hasArgs {
		p.str(" ")
	}
	if pd.Detached() {
		p.str("<detached ...>")
	} else {
		p.str("<unfinished ...>")
	}
}

func (p *printer) close(r *Result) {
	if r == nil {
		return
	}
	p.str(") ")
	p.tabto()
	p.node(r)
}

func (r *Resumed) canon(p *printer) {
	p.str("<... ")
	p.str(string(r.Name))
	p.str(" resumed>")
	if r.Out != nil {
		p.str(" => ")
		p.node(r.Out)
	}
	if r.Comma {
		p.str(", ")
	}
	p.args(r.Args)
	p.pending(r.Pending, len(r.Args) > 0)
	p.close(r.Result)
}

func (s *Signal) canon(p *printer) {
	p.str("--- ")
	if s.Stopped {
		p.str("stopped by ")
	}
	p.str(s.Name)
	if s.Info != nil {
		p.str(" ")
		p.node(s.Info)
	}
	p.str(" ---")
}

func (e *Exit) canon(p *printer) {
	p.str("+++ ")
	switch {
	case e.KilledBy != "":
		p.str("killed by ")
		p.str(e.KilledBy)
		if e.CoreDumped {
			p.str(" (core dumped)")
		}
	case e.SupersededBy != "":
		p.str("superseded by execve in pid ")
		p.str(e.SupersededBy)
	default:
		p.str("exited with ")
		p.str(e.Status)
	}
	p.str(" +++")
}

func (i *Info) canon(p *printer)    { p.str(i.Text) }
func (c *Comment) canon(p *printer) { p.str(c.Text) }

func (r *Result) canon(p *printer) {
	p.str("= ")
	if r.Unknown || r.Value == nil {
		p.str("?")
	} else {
		p.node(r.Value)
	}
	if r.Outcome.Errno != "" {
		p.str(" ")
		p.str(r.Outcome.Errno)
	}
	for _, n := range r.Outcome.Notes {
		p.str(" ")
		p.str(n)
	}
	if r.Outcome.Unavailable {
		p.str(" <unavailable>")
	}
	if r.Outcome.Duration != "" {
		p.str(" ")
		p.str(r.Outcome.Duration)
	}
}

func (a *Arg) canon(p *printer) {
	if a.Name != "" {
		p.str(string(a.Name))
		p.str("=")
	}
	p.node(a.Value)
	if a.Out != nil {
		p.str(" => ")
		p.node(a.Out)
	}
}

func (e *Expr) canon(p *printer) {
	p.node(e.Head)
	p.comment(e.Comment)
	for _, t := range e.Tail {
		p.node(t)
	}
}

func (p *printer) comment(c string) {
	if c != "" {
		p.str(" ")
		p.str(c)
	}
}

func (b *BinOp) canon(p *printer) {
	switch b.Op {
	case "&&", "||", "==", "or":
		p.str(" ")
		p.str(b.Op)
		p.str(" ")
	default:
		p.str(b.Op)
	}
	p.node(b.X)
	p.comment(b.Comment)
}

func (i *Int) canon(p *printer) {
	p.str(i.Text)
	p.decor(i.Decor)
}

func (p *printer) decor(d *Decor) {
	if d != nil {
		p.str("<")
		p.str(d.Text)
		p.str(">")
	}
}

func (i *Ident) canon(p *printer) {
	p.str(i.Name)
	if i.Call != nil {
		p.node(i.Call)
	}
	p.decor(i.Decor)
}

func (t *Tuple) canon(p *printer) {
	p.str("(")
	p.args(t.Args)
	p.str(")")
}

func (s *Str) canon(p *printer) { p.str(s.Quoted) }

func (s *Struct) canon(p *printer) {
	p.str("{")
	p.args(s.Fields)
	p.str("}")
}

func (a *Array) canon(p *printer) {
	p.str("[")
	p.args(a.Elems)
	p.str("]")
}

func (b *BitSet) canon(p *printer) {
	if b.Not {
		p.str("~")
	}
	p.str("[")
	for i, x := range b.Bits {
		if i > 0 {
			p.str(" ")
		}
		p.node(x)
	}
	p.str("]")
}

func (*Ellipsis) canon(p *printer)   { p.str("...") }
func (r *Ref) canon(p *printer)      { p.str("&"); p.str(r.Name) }
func (r *Resuming) canon(p *printer) { p.str(r.Text) }
func (r *Remark) canon(p *printer)   { p.str(r.Text) }

// Children in source order, for the printer's clean check and for walks.

func (l *Line) children(fn func(node)) {
	if l.Body != nil {
		fn(l.Body)
	}
}

func (c *Call) children(fn func(node)) {
	eachArg(c.Args, fn)
	if c.Result != nil {
		fn(c.Result)
	}
}

func (r *Resumed) children(fn func(node)) {
	if r.Out != nil {
		fn(r.Out)
	}
	eachArg(r.Args, fn)
	if r.Result != nil {
		fn(r.Result)
	}
}

func (s *Signal) children(fn func(node)) {
	if s.Info != nil {
		fn(s.Info)
	}
}

func (*Exit) children(func(node))    {}
func (*Info) children(func(node))    {}
func (*Comment) children(func(node)) {}

func (r *Result) children(fn func(node)) {
	if r.Value != nil {
		fn(r.Value)
	}
}

func (a *Arg) children(fn func(node)) {
	fn(a.Value)
	if a.Out != nil {
		fn(a.Out)
	}
}

func (e *Expr) children(fn func(node)) {
	fn(e.Head)
	for _, t := range e.Tail {
		fn(t)
	}
}

func (b *BinOp) children(fn func(node)) { fn(b.X) }
func (*Int) children(func(node))        {}
func (i *Ident) children(fn func(node)) {
	if i.Call != nil {
		fn(i.Call)
	}
}
func (t *Tuple) children(fn func(node))  { eachArg(t.Args, fn) }
func (*Str) children(func(node))         {}
func (s *Struct) children(fn func(node)) { eachArg(s.Fields, fn) }
func (a *Array) children(fn func(node))  { eachArg(a.Elems, fn) }
func (b *BitSet) children(fn func(node)) {
	for _, x := range b.Bits {
		fn(x)
	}
}
func (*Ellipsis) children(func(node)) {}
func (*Ref) children(func(node))      {}
func (*Resuming) children(func(node)) {}
func (*Remark) children(func(node))   {}

func eachArg(args []*Arg, fn func(node)) {
	for _, a := range args {
		fn(a)
	}
}
