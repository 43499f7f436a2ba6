package parser

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// grammars are built on first use: building them walks the AST's types
// by reflection, a cost a command that only prints traces (record) need
// not pay at start-up.
// (Assigned in init: the grammars refer to parseValue, which uses them.)
var grammars func() *builtGrammars

func init() { grammars = sync.OnceValue(buildGrammars) }

func buildGrammars() *builtGrammars {
	opts := []participle.Option{participle.Lexer(lexDef{}), participle.ParseTypeWith(parseValue)}
	return &builtGrammars{
		line: participle.MustBuild[Line](
			participle.Lexer(lexDef{}),
			participle.Union[Body](&Call{}, &Resumed{}, &Signal{}, &Exit{}, &Info{}, &Comment{}),
			participle.ParseTypeWith(parseValue),
		),
		strct:  participle.MustBuild[Struct](opts...),
		array:  participle.MustBuild[Array](opts...),
		bitSet: participle.MustBuild[BitSet](opts...),
		call:   participle.MustBuild[Ident](opts...),
	}
}

type builtGrammars struct {
	line   *participle.Parser[Line]
	strct  *participle.Parser[Struct]
	array  *participle.Parser[Array]
	bitSet *participle.Parser[BitSet]
	call   *participle.Parser[Ident]
}

// SyntaxError is a line that is not valid strace output.
type SyntaxError struct {
	Pos      lexer.Position
	Expected string // what the grammar wanted there
	Found    string // what stood there
	Text     string // the whole line, so a formatter can pass it through
}

func (e *SyntaxError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s: expected %s", posString(e.Pos), e.Expected)
	}
	return fmt.Sprintf("%s: expected %s, found %s", posString(e.Pos), e.Expected, e.Found)
}

func posString(p lexer.Position) string {
	name := p.Filename
	if name == "" {
		name = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d", name, p.Line, p.Column)
}

// lexers are reused across lines: the token slice is the one allocation a
// line would otherwise pay twice.
var lexers = sync.Pool{New: func() any { return &lineLexer{toks: make([]lexer.Token, 0, 64)} }}

// ParseLine parses one line (without its newline). file and lineNo only
// label positions and errors.
func ParseLine(file string, lineNo int, text string) (*Line, error) {
	if strings.TrimSpace(text) == "" {
		return &Line{Raw: text, Node: Node{Pos: lexer.Position{Filename: file, Line: lineNo, Column: 1}}}, nil
	}
	l, err := parseLine(file, lineNo, text)
	var se *SyntaxError
	if errors.As(err, &se) {
		se.Text = text
	}
	return l, err
}

func parseLine(file string, lineNo int, text string) (*Line, error) {
	lx := lexers.Get().(*lineLexer)
	defer lexers.Put(lx)
	if err := lx.lex(file, lineNo, text); err != nil {
		var le *LexError
		if errors.As(err, &le) {
			return nil, &SyntaxError{Pos: le.Pos, Expected: strings.TrimPrefix(le.Msg, "expected ")}
		}
		return nil, err
	}
	peek, err := lexer.Upgrade(lx)
	if err != nil {
		return nil, err
	}
	l, err := grammars().line.ParseFromLexer(peek)
	if err != nil {
		if l != nil {
			l.Raw = text
			// A call that stopped early says more than "unexpected token".
			if cerr := l.check(); cerr != nil {
				return nil, cerr
			}
		}
		return nil, syntaxError(err, text)
	}
	l.Raw = text
	if err := l.check(); err != nil {
		return nil, err
	}
	return l, nil
}

// check enforces what the struct grammar leaves optional: a call ends with
// either its result or an unfinished marker.
func (l *Line) check() error {
	var pd Pending
	var r *Result
	var end lexer.Position
	switch b := l.Body.(type) {
	case *Call:
		pd, r, end = b.Pending, b.Result, b.EndPos
	case *Resumed:
		pd, r, end = b.Pending, b.Result, b.EndPos
	default:
		return nil
	}
	if pd == "" && r == nil {
		return &SyntaxError{Pos: end, Expected: `")" and the result, or "<unfinished ...>"`, Found: found(l.Raw, end)}
	}
	return nil
}

func found(raw string, p lexer.Position) string {
	if p.Offset >= len(raw) {
		return "end of line"
	}
	rest := raw[p.Offset:]
	if len(rest) > 20 {
		rest = rest[:20] + "…"
	}
	return fmt.Sprintf("%q", rest)
}

// syntaxError turns participle's "unexpected token" into file:line:col:
// expected ..., found ....
func syntaxError(err error, raw string) error {
	var perr participle.Error
	if !errors.As(err, &perr) {
		return err
	}
	pos := perr.Position()
	msg := perr.Message()
	expected := "end of line"
	if i := strings.Index(msg, "(expected "); i >= 0 {
		expected = describe(strings.TrimSuffix(msg[i+len("(expected "):], ")"))
	} else if !strings.HasPrefix(msg, "unexpected token") {
		expected = msg
	}
	return &SyntaxError{Pos: pos, Expected: expected, Found: found(raw, pos)}
}

// describe turns participle's EBNF of what it expected into words: the
// first thing the production needs, which is what the user must type.
func describe(ebnf string) string {
	switch {
	case strings.Contains(ebnf, "<bitopen>"), strings.HasPrefix(ebnf, "Expr"), strings.HasPrefix(ebnf, "Value"):
		return "a value"
	case strings.HasPrefix(ebnf, `"`):
		if j := strings.Index(ebnf[1:], `"`); j >= 0 {
			return ebnf[:j+2]
		}
	case strings.HasPrefix(ebnf, "<"):
		if j := strings.Index(ebnf, ">"); j > 0 {
			return "a " + ebnf[1:j]
		}
	}
	return ebnf
}
