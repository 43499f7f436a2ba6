package parser

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Expressions and optional single tokens parse themselves. participle
// pays a branch, a deferred capture and an error value for every optional
// group it tries, and most of a trace's tokens are operands or optional
// markers, so those are read here; the structure of lines, calls,
// argument lists, structs, arrays and results stays in ast.go's grammar.
//
// A Value's alternatives are told apart by their first token, so instead of
// letting participle try each member of a union in turn (a branch, a
// sub-parse and an error value for every member that does not match),
// parseValue looks at that token once: single-token operands are read here,
// and the structured ones (structs, arrays, bit sets, call expressions) go
// to their own participle productions in ast.go. Profiling showed union
// attempts were most of the parse time.

// The sub-grammars are in grammars (parse.go).

var trailing = participle.AllowTrailing(true)

func parseValue(lex *lexer.PeekingLexer) (Value, error) {
	t := lex.Peek()
	switch t.Type {
	case tokNumber:
		i := &Int{Text: t.Value}
		leaf(lex, &i.Node)
		i.Decor = decor(lex, &i.Node)
		return i, nil
	case tokString:
		s := &Str{Quoted: t.Value}
		leaf(lex, &s.Node)
		return s, nil
	case tokIdent:
		if peek2(lex).Value == "(" {
			return sub(grammars().call, lex)
		}
		id := &Ident{Name: t.Value}
		leaf(lex, &id.Node)
		id.Decor = decor(lex, &id.Node)
		return id, nil
	case tokBitOpen:
		return sub(grammars().bitSet, lex)
	case tokComment:
		r := &Remark{Text: t.Value}
		leaf(lex, &r.Node)
		return r, nil
	case tokResuming:
		r := &Resuming{Text: t.Value}
		leaf(lex, &r.Node)
		return r, nil
	case tokPunct:
		switch t.Value {
		case "{":
			return sub(grammars().strct, lex)
		case "[":
			return sub(grammars().array, lex)
		case "~":
			return sub(grammars().bitSet, lex)
		case "...":
			e := &Ellipsis{}
			leaf(lex, &e.Node)
			return e, nil
		case "&":
			if n := peek2(lex); n.Type == tokIdent {
				r := &Ref{Name: n.Value}
				r.Pos = t.Pos
				lex.Next()
				lex.Next()
				r.EndPos = lex.Peek().Pos
				return r, nil
			}
		}
	}
	return nil, participle.NextMatch
}

// sub runs a participle production from the current token and leaves the
// lexer after what it consumed.
func sub[T any, PT interface {
	*T
	Value
}](p *participle.Parser[T], lex *lexer.PeekingLexer) (Value, error) {
	v, err := p.ParseFromLexer(lex, trailing)
	if err != nil {
		return nil, err
	}
	return PT(v), nil
}

// leaf consumes one token and records the node's span.
func leaf(lex *lexer.PeekingLexer, n *Node) {
	n.Pos = lex.Next().Pos
	n.EndPos = lex.Peek().Pos
}

// decor consumes an -y decoration glued to the token just read.
func decor(lex *lexer.PeekingLexer, n *Node) *Decor {
	d := lex.Peek()
	if d.Type != tokDecor {
		return nil
	}
	lex.Next()
	n.EndPos = lex.Peek().Pos
	return &Decor{Text: d.Value[1 : len(d.Value)-1]}
}

// peek2 returns the token after the next one.
func peek2(lex *lexer.PeekingLexer) lexer.Token {
	cp := lex.MakeCheckpoint()
	lex.Next()
	t := *lex.Peek()
	lex.LoadCheckpoint(cp)
	return t
}

// Parse implements participle.Parseable: Value Comment? (BinOp)*.
func (e *Expr) Parse(lex *lexer.PeekingLexer) error {
	start := lex.Peek().Pos
	head, err := parseValue(lex)
	if err != nil {
		return err
	}
	if head == nil {
		return participle.NextMatch
	}
	e.Head = head
	e.Comment = comment(lex)
	for {
		t := lex.Peek()
		if !isOperator(t) {
			break
		}
		op := &BinOp{Op: t.Value}
		op.Pos = t.Pos
		lex.Next()
		x, err := parseValue(lex)
		if err != nil {
			return err
		}
		if x == nil {
			n := lex.Peek()
			return &participle.UnexpectedTokenError{Unexpected: *n, Expect: "a value after " + t.Value}
		}
		op.X = x
		op.Comment = comment(lex)
		op.EndPos = lex.Peek().Pos
		e.Tail = append(e.Tail, op)
	}
	e.Pos = start
	e.EndPos = lex.Peek().Pos
	return nil
}

// comment consumes an optional /* comment */.
func comment(lex *lexer.PeekingLexer) string {
	if t := lex.Peek(); t.Type == tokComment {
		lex.Next()
		return t.Value
	}
	return ""
}

func isOperator(t *lexer.Token) bool {
	switch t.Type {
	case tokPunct:
		switch t.Value {
		case "|", "*", "<<", "&&", "||", "==", "+":
			return true
		}
	case tokIdent:
		return t.Value == "or"
	}
	return false
}

// Parse implements participle.Parseable: the pid and timestamp, if any.
func (p *Prefix) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); t.Type == tokPid {
		pid, err := parsePid(t.Value)
		if err != nil {
			return &participle.UnexpectedTokenError{Unexpected: *t, Expect: "a pid"}
		}
		p.Pid = pid
		lex.Next()
	}
	if t := lex.Peek(); t.Type == tokTime {
		p.Time = t.Value
		lex.Next()
	}
	return nil
}

// Parse implements participle.Parseable: Key? Expr ( "=>" Expr )?.
func (a *Arg) Parse(lex *lexer.PeekingLexer) error {
	start := lex.Peek().Pos
	if t := lex.Peek(); t.Type == tokKey {
		a.Name = Key(t.Value[:len(t.Value)-1])
		lex.Next()
	}
	v := &Expr{}
	if err := v.Parse(lex); err != nil {
		if err == participle.NextMatch && a.Name != "" {
			return &participle.UnexpectedTokenError{Unexpected: *lex.Peek(), Expect: "a value after " + string(a.Name) + "="}
		}
		return err
	}
	a.Value = v
	if t := lex.Peek(); t.Type == tokPunct && t.Value == "=>" {
		lex.Next()
		out := &Expr{}
		if err := out.Parse(lex); err != nil {
			if err == participle.NextMatch {
				return &participle.UnexpectedTokenError{Unexpected: *lex.Peek(), Expect: "a value after =>"}
			}
			return err
		}
		a.Out = out
	}
	a.Pos = start
	a.EndPos = lex.Peek().Pos
	return nil
}

// Parse implements participle.Parseable: an optional "name=".
func (k *Key) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); t.Type == tokKey {
		*k = Key(t.Value[:len(t.Value)-1])
		lex.Next()
	}
	return nil
}

// Parse implements participle.Parseable: an optional "<unfinished ...>".
func (p *Pending) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); t.Type == tokUnfinished || t.Type == tokDetached {
		*p = Pending(t.Value)
		lex.Next()
	}
	return nil
}

// Parse implements participle.Parseable: errno, notes, <unavailable>, -T.
func (o *Outcome) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); t.Type == tokIdent {
		o.Errno = t.Value
		lex.Next()
	}
	for t := lex.Peek(); t.Type == tokNote; t = lex.Peek() {
		o.Notes = append(o.Notes, t.Value)
		lex.Next()
	}
	if t := lex.Peek(); t.Type == tokUnavailable {
		o.Unavailable = true
		lex.Next()
	}
	if t := lex.Peek(); t.Type == tokDuration {
		o.Duration = t.Value
		lex.Next()
	}
	return nil
}
