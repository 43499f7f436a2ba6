package parser

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types of the strace lexer. The lexer is written by hand because
// strace's text is context sensitive in a few places that a regular lexer
// cannot see cheaply: a '<' glued to a number starts an fd decoration but a
// '<' after a space is a duration or a marker; a '(' after the result is a
// free-text note such as an errno message; '[' opens a comma-separated array
// or a space-separated bit set. Whitespace is never emitted: nodes remember
// their byte offsets and the printer takes the spacing from the source line.
const (
	tokEOF                         = lexer.EOF
	tokPunct       lexer.TokenType = -(iota + 2) // ( ) [ ] { } , = => == | ...
	tokNumber                                    // 42 -1 0x1f 0644 1.5
	tokString                                    // "abc\n" "abc"...
	tokIdent                                     // O_RDONLY NULL read
	tokKey                                       // st_mode= (an identifier glued to '=')
	tokDecor                                     // </etc/passwd> <TCP:[1->2]> glued to a number or identifier
	tokComment                                   // /* 35 vars */
	tokNote                                      // (No such file or directory) after the result
	tokDuration                                  // <0.000012> from -T
	tokUnfinished                                // [", "] <unfinished ...>
	tokDetached                                  // [", "] <detached ...>
	tokResumed                                   // <... read resumed>
	tokResuming                                  // <... resuming interrupted read ...>
	tokUnavailable                               // <unavailable>
	tokBitOpen                                   // the '[' of a space-separated bit set
	tokPid                                       // 1234 or [pid  1234] at the start of a line
	tokTime                                      // 12:34:56.123456, 1700000000.123456 or 0.000123
	tokHash                                      // a whole '#' comment line
	tokInfo                                      // a whole "strace: Process 12 attached" line
)

var symbols = map[string]lexer.TokenType{
	"EOF": tokEOF, "Punct": tokPunct, "Number": tokNumber, "String": tokString,
	"Ident": tokIdent, "Key": tokKey, "Decor": tokDecor, "Comment": tokComment,
	"Note": tokNote, "Duration": tokDuration, "Unfinished": tokUnfinished,
	"Detached": tokDetached, "Resumed": tokResumed, "Resuming": tokResuming,
	"Unavailable": tokUnavailable, "BitOpen": tokBitOpen, "Pid": tokPid,
	"Time": tokTime, "Hash": tokHash, "Info": tokInfo,
}

// lexDef is the participle lexer.Definition for one line of strace output.
type lexDef struct{}

func (lexDef) Symbols() map[string]lexer.TokenType { return symbols }

func (d lexDef) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

func (lexDef) LexString(filename, s string) (lexer.Lexer, error) {
	l := &lineLexer{}
	if err := l.lex(filename, 1, s); err != nil {
		return nil, err
	}
	return l, nil
}

// lineLexer turns one line into tokens up front, so participle's
// PeekingLexer copies a finished slice and the lexer itself holds no state
// between lines.
type lineLexer struct {
	src    string
	file   string
	line   int
	toks   []lexer.Token
	next   int
	depth  int  // nesting of ( [ {; goes negative on the resumed half of a call
	result bool // a top-level '=' has been seen: what follows is the result
}

// Next implements lexer.Lexer.
func (l *lineLexer) Next() (lexer.Token, error) {
	if l.next < len(l.toks) {
		t := l.toks[l.next]
		l.next++
		return t, nil
	}
	return lexer.EOFToken(l.pos(len(l.src))), nil
}

// LexError is a token the lexer could not make sense of.
type LexError struct {
	Pos lexer.Position
	Msg string
}

func (e *LexError) Error() string { return fmt.Sprintf("%s: %s", posString(e.Pos), e.Msg) }

func (l *lineLexer) pos(off int) lexer.Position {
	return lexer.Position{Filename: l.file, Line: l.line, Offset: off, Column: off + 1}
}

func (l *lineLexer) emit(t lexer.TokenType, start, end int) {
	l.toks = append(l.toks, lexer.Token{Type: t, Value: l.src[start:end], Pos: l.pos(start)})
}

func (l *lineLexer) errorf(off int, format string, args ...any) error {
	return &LexError{Pos: l.pos(off), Msg: fmt.Sprintf(format, args...)}
}

func (l *lineLexer) lex(file string, line int, s string) error {
	*l = lineLexer{src: s, file: file, line: line, toks: l.toks[:0]}
	i := l.prefix()
	if i < 0 {
		return nil
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '"':
			j, err := l.str(i)
			if err != nil {
				return err
			}
			l.emit(tokString, i, j)
			i = j
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return l.errorf(i, "expected \"*/\" closing the comment")
			}
			j := i + 2 + end + 2
			l.emit(tokComment, i, j)
			i = j
		case c == '<':
			j, err := l.angle(i)
			if err != nil {
				return err
			}
			i = j
		case c == ',':
			if j, t := l.pendingAfter(i + 1); j > 0 {
				l.emit(t, i, j)
				i = j
				continue
			}
			l.emit(tokPunct, i, i+1)
			i++
		case c == '(':
			if l.result && l.depth <= 0 && i > 0 && s[i-1] == ' ' {
				j, err := l.note(i)
				if err != nil {
					return err
				}
				l.emit(tokNote, i, j)
				i = j
				continue
			}
			l.depth++
			l.emit(tokPunct, i, i+1)
			i++
		case c == '{':
			l.depth++
			l.emit(tokPunct, i, i+1)
			i++
		case c == '[':
			l.depth++
			t := tokPunct
			if l.isBitSet(i) {
				t = tokBitOpen
			}
			l.emit(t, i, i+1)
			i++
		case c == ')' || c == ']' || c == '}':
			l.depth--
			l.emit(tokPunct, i, i+1)
			i++
		case c == '=':
			switch {
			case strings.HasPrefix(s[i:], "=="), strings.HasPrefix(s[i:], "=>"):
				l.emit(tokPunct, i, i+2)
				i += 2
			default:
				if l.depth <= 0 {
					l.result = true
				}
				l.emit(tokPunct, i, i+1)
				i++
			}
		case c == '-' && strings.HasPrefix(s[i:], "---"), c == '+' && strings.HasPrefix(s[i:], "+++"),
			c == '.' && strings.HasPrefix(s[i:], "..."):
			l.emit(tokPunct, i, i+3)
			i += 3
		case c == '-' && i+1 < len(s) && isDigit(s[i+1]):
			j := scanNumber(s, i+1)
			l.emit(tokNumber, i, j)
			i = j
		case isDigit(c):
			j := scanNumber(s, i)
			l.emit(tokNumber, i, j)
			i = j
		case isIdentStart(c):
			j := scanIdent(s, i)
			if k := keyEnd(s, j); k > 0 {
				l.emit(tokKey, i, k)
				i = k
				continue
			}
			l.emit(tokIdent, i, j)
			i = j
		case c == '?':
			j := i
			for j < len(s) && s[j] == '?' {
				j++
			}
			if j < len(s) && s[j] == '(' {
				l.emit(tokIdent, i, j) // "????(" is strace's name for an unknown call
			} else {
				l.emit(tokPunct, i, j)
			}
			i = j
		case c == '&' || c == '|':
			if i+1 < len(s) && s[i+1] == c {
				l.emit(tokPunct, i, i+2)
				i += 2
				continue
			}
			l.emit(tokPunct, i, i+1)
			i++
		case strings.IndexByte("~*+-!:", c) >= 0:
			l.emit(tokPunct, i, i+1)
			i++
		default:
			return l.errorf(i, "expected a value, an operator or punctuation, found %q", c)
		}
	}
	return nil
}

// prefix lexes what may stand at the start of a line: a whole comment or
// informational line, then the pid and the timestamp. It returns where the
// body starts, or -1 when the whole line was one token.
func (l *lineLexer) prefix() int {
	s := l.src
	if strings.HasPrefix(s, "#") {
		l.emit(tokHash, 0, len(s))
		return -1
	}
	if isInfoLine(s) {
		l.emit(tokInfo, 0, len(strings.TrimRight(s, " \t")))
		return -1
	}
	i := 0
	if strings.HasPrefix(s, "[pid ") {
		j := 5
		for j < len(s) && s[j] == ' ' {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j && k < len(s) && s[k] == ']' {
			l.emit(tokPid, 0, k+1)
			i = k + 1
		}
	} else if j := digitsEnd(s, 0); j > 0 && j < len(s) && s[j] == ' ' {
		l.emit(tokPid, 0, j)
		i = j
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if j := timeEnd(s, i); j > 0 {
		l.emit(tokTime, i, j)
		i = j
	}
	return i
}

// isInfoLine recognises strace's remarks about itself: "strace: ...",
// "Process 12 attached", "[ Process PID=12 runs in 32 bit mode. ]".
func isInfoLine(s string) bool {
	return len(strings.TrimSpace(s)) > len("strace:") && strings.HasPrefix(s, "strace: ") ||
		strings.HasPrefix(s, "Process ") && len(s) > 8 && isDigit(s[8]) ||
		strings.HasPrefix(s, "[ Process PID=")
}

// timeEnd recognises -t (12:34:56), -tt (12:34:56.123456), -ttt
// (1700000000.123456) and -r (0.000123) stamps followed by a space.
func timeEnd(s string, i int) int {
	j := digitsEnd(s, i)
	if j <= i {
		return 0
	}
	if j < len(s) && s[j] == ':' {
		for n := 0; n < 2; n++ {
			if j >= len(s) || s[j] != ':' {
				return 0
			}
			k := digitsEnd(s, j+1)
			if k <= j+1 {
				return 0
			}
			j = k
		}
	}
	if j < len(s) && s[j] == '.' {
		k := digitsEnd(s, j+1)
		if k <= j+1 {
			return 0
		}
		j = k
	} else if j-i < 8 || s[i+2] != ':' {
		return 0 // a bare integer here is not a stamp
	}
	if j < len(s) && s[j] == ' ' {
		return j
	}
	return 0
}

func digitsEnd(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j
}

// str scans a quoted string, with a "..." glued to its closing quote when
// strace truncated it.
func (l *lineLexer) str(i int) (int, error) {
	s := l.src
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			j++
			if strings.HasPrefix(s[j:], "...") {
				j += 3
			}
			return j, nil
		}
	}
	return 0, l.errorf(i, "expected '\"' closing the string")
}

// angle lexes everything that starts with '<'.
func (l *lineLexer) angle(i int) (int, error) {
	s := l.src
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "<<"):
		l.emit(tokPunct, i, i+2)
		return i + 2, nil
	case i > 0 && isDecorAnchor(s[i-1]):
		j, err := l.decor(i)
		if err != nil {
			return 0, err
		}
		l.emit(tokDecor, i, j)
		return j, nil
	case strings.HasPrefix(rest, "<unfinished ...>"):
		l.emit(tokUnfinished, i, i+len("<unfinished ...>"))
		return i + len("<unfinished ...>"), nil
	case strings.HasPrefix(rest, "<detached ...>"):
		l.emit(tokDetached, i, i+len("<detached ...>"))
		return i + len("<detached ...>"), nil
	case strings.HasPrefix(rest, "<unavailable>"):
		l.emit(tokUnavailable, i, i+len("<unavailable>"))
		return i + len("<unavailable>"), nil
	case strings.HasPrefix(rest, "<... resuming "):
		end := strings.Index(rest, " ...>")
		if end < 0 {
			return 0, l.errorf(i, "expected \" ...>\" closing %q", "<... resuming")
		}
		l.emit(tokResuming, i, i+end+5)
		return i + end + 5, nil
	case strings.HasPrefix(rest, "<... "):
		end := strings.Index(rest[5:], " resumed>")
		if end <= 0 || strings.ContainsAny(rest[5:5+end], " <>") {
			return 0, l.errorf(i, "expected \"<... NAME resumed>\"")
		}
		l.emit(tokResumed, i, i+5+end+9)
		return i + 5 + end + 9, nil
	}
	j := i + 1
	for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
		j++
	}
	if j > i+1 && j < len(s) && s[j] == '>' {
		l.emit(tokDuration, i, j+1)
		return j + 1, nil
	}
	return 0, l.errorf(i, "expected a decoration glued to a value, <unfinished ...>, <... NAME resumed> or a <duration>")
}

func isDecorAnchor(c byte) bool {
	return isDigit(c) || isIdentStart(c) || c == ']'
}

// decor scans an fd or pid decoration: </path>, <TCP:[a->b]>,
// </dev/null<char 1:3>>. strace escapes '<' and '>' inside paths, so only
// the nesting of '<', '[' and quotes decides where it ends.
func (l *lineLexer) decor(i int) (int, error) {
	s := l.src
	angle, square := 0, 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
		case '[':
			square++
		case ']':
			square--
		case '<':
			if square == 0 {
				angle++
			}
		case '>':
			if square == 0 {
				angle--
				if angle == 0 {
					return j + 1, nil
				}
			}
		}
	}
	return 0, l.errorf(i, "expected '>' closing the decoration")
}

// pendingAfter recognises ", <unfinished ...>" so the comma before the
// marker belongs to it and the argument list needs no lookahead.
func (l *lineLexer) pendingAfter(i int) (int, lexer.TokenType) {
	s := l.src
	j := i
	for j < len(s) && s[j] == ' ' {
		j++
	}
	switch {
	case strings.HasPrefix(s[j:], "<unfinished ...>"):
		return j + len("<unfinished ...>"), tokUnfinished
	case strings.HasPrefix(s[j:], "<detached ...>"):
		return j + len("<detached ...>"), tokDetached
	}
	return 0, 0
}

// note scans a parenthesised note after the result up to its matching
// ')': errno texts, "(flags O_RDONLY)", "([{fd=3, revents=POLLIN}])",
// "(INJECTED)".
func (l *lineLexer) note(i int) (int, error) {
	s := l.src
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, l.errorf(i, "expected ')' closing the note")
}

// isBitSet looks inside the bracket opened at i: strace separates the
// members of signal sets, CPU sets and other bit sets with spaces and the
// elements of arrays with commas.
func (l *lineLexer) isBitSet(i int) bool {
	s := l.src
	if i > 0 && s[i-1] == '~' {
		return true
	}
	depth := 0
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch c {
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			if depth == 0 {
				return false
			}
			depth--
		case ',':
			if depth == 0 {
				return false
			}
		case ' ':
			if depth == 0 && j+1 < len(s) && isOperandEnd(s, j-1) &&
				(isIdentStart(s[j+1]) || isDigit(s[j+1])) && !strings.HasPrefix(s[j+1:], "or ") {
				return true
			}
		}
	}
	return false
}

// isOperandEnd reports whether s[i] can end an operand; the '>' of a
// decoration can, the '>' of "=>" cannot.
func isOperandEnd(s string, i int) bool {
	c := s[i]
	if c == '>' {
		return i > 0 && s[i-1] != '='
	}
	return isDigit(c) || isIdentStart(c) || c == ')' || c == ']' || c == '}' || c == '"'
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func scanIdent(s string, i int) int {
	j := i
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	return j
}

// keyEnd returns the end of "name=" or "name[INDEX]=" starting at the end
// of an identifier, or 0 when the identifier is not a field name.
func keyEnd(s string, j int) int {
	if j < len(s) && s[j] == '[' {
		k := strings.IndexByte(s[j:], ']')
		if k < 0 {
			return 0
		}
		j += k + 1
	}
	if j < len(s) && s[j] == '=' && (j+1 >= len(s) || (s[j+1] != '=' && s[j+1] != '>')) {
		return j + 1
	}
	return 0
}

// scanNumber scans decimal, octal, hexadecimal and decimal-fraction numbers.
func scanNumber(s string, i int) int {
	j := i
	if strings.HasPrefix(s[j:], "0x") || strings.HasPrefix(s[j:], "0X") {
		j += 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
		return j
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	return j
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
