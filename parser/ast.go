package parser

import (
	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar of one line of strace output, written as the AST it
// produces (participle reads the struct tags top to bottom). Whitespace is
// not part of the grammar: every node records where it starts and ends in
// the line, and the printer copies the spacing from there.

// Line is one line of a trace: a system call, one half of a call split by
// another thread, a signal, an exit, strace's own remarks, or a '#' comment.
type Line struct {
	Node
	Prefix Prefix `parser:"@@"`
	Body   Body   `parser:"@@"`

	// Raw is the line as read, without its newline; empty for a line that
	// was built rather than parsed.
	Raw string `parser:""`
	// NoEOL is set on a last line that had no newline, so printing gives
	// the file back byte for byte.
	NoEOL bool `parser:""`
}

// Body is what follows the pid and timestamp: *Call, *Resumed, *Signal,
// *Exit, *Info or *Comment.
type Body interface{ node }

// Call is a system call: complete, or the first half of one that another
// thread interrupted (Pending holds the "<unfinished ...>" marker).
type Call struct {
	Node
	Name    string  `parser:"@Ident '('"`
	Args    []*Arg  `parser:"( @@ ( ',' @@ )* )?"`
	Pending Pending `parser:"@@"`
	Result  *Result `parser:"( ')' @@ )?"`
}

// Resumed is the second half of a call: "<... read resumed>" followed by
// the arguments strace could print only on return. It may begin with the
// out-value of the last argument of the first half ("=> {parent_tid=...}")
// and with the comma before the next argument when the first half stopped
// right after one ("<... clone resumed>, child_tidptr=...").
type Resumed struct {
	Node
	Name    ResumedName `parser:"@Resumed"`
	Out     *Expr       `parser:"( '=>' @@ )?"`
	Comma   bool        `parser:"@','?"`
	Args    []*Arg      `parser:"( @@ ( ',' @@ )* )?"`
	Pending Pending     `parser:"@@"`
	Result  *Result     `parser:"( ')' @@ )?"`
}

// Signal is a signal delivery ("--- SIGCHLD {si_signo=SIGCHLD, ...} ---")
// or a group stop ("--- stopped by SIGSTOP ---").
type Signal struct {
	Node
	Stopped bool    `parser:"'---' ( @'stopped' 'by' )?"`
	Name    string  `parser:"@Ident"`
	Info    *Struct `parser:"@@? '---'"`
}

// Exit is the end of a process: "+++ exited with 0 +++",
// "+++ killed by SIGSEGV (core dumped) +++" or
// "+++ superseded by execve in pid 12 +++".
type Exit struct {
	Node
	Status       string `parser:"'+++' ( 'exited' 'with' @Number"`
	KilledBy     string `parser:"      | 'killed' 'by' @Ident"`
	CoreDumped   bool   `parser:"        @( '(' 'core' 'dumped' ')' )?"`
	SupersededBy string `parser:"      | 'superseded' 'by' 'execve' 'in' 'pid' @Number ) '+++'"`
}

// Info is a line strace writes about itself ("strace: Process 12 attached").
type Info struct {
	Node
	Text string `parser:"@Info"`
}

// Comment is a '#' line: faultline's header, a mutator's record of the
// line it changed, a person's note.
type Comment struct {
	Node
	Text string `parser:"@Hash"`
}

// Result is what follows a call's closing parenthesis: "= 3", "= ?",
// "= -1 ENOENT (No such file or directory)", "= 0x1 (flags FD_CLOEXEC)",
// "= 0 (INJECTED)", and the -T duration.
type Result struct {
	Node
	Unknown bool    `parser:"'=' ( @'?'"`
	Value   *Expr   `parser:"    | @@ )"`
	Outcome Outcome `parser:"@@"`
}

// Outcome is what strace says after a result value: the errno name, notes
// in parentheses (the errno text, "(flags FD_CLOEXEC)", "(INJECTED)"),
// "<unavailable>", and the -T duration.
type Outcome struct {
	Errno       string
	Notes       []string
	Unavailable bool
	Duration    string
}

// Arg is an argument of a call, a member of a struct or an element of an
// array: an optional name (clone's "flags=", a struct's "st_mode="), a
// value, and for in/out parameters the value on return ("[16 => 28]").
//
//	Arg = Key? Expr ( "=>" Expr )?
//
// read by value.go like the expressions it is made of.
type Arg struct {
	Node
	Name  Key
	Value *Expr
	Out   *Expr
}

// Expr is a value: one operand, or operands joined by operators as in flag
// sets (O_WRONLY|O_CREAT), products (8192*1024), shifts (1<<CAP_CHOWN),
// wait statuses (WIFEXITED(s) && WEXITSTATUS(s) == 0) and ambiguous ioctl
// names (TCGETS or SNDCTL_TMR_TIMEBASE), with a trailing comment. strace
// prints these flat, without precedence, so they are kept flat:
//
//	Expr  = Value Comment? ( BinOp )*
//	BinOp = ( "|" | "*" | "<<" | "&&" | "||" | "==" | "+" | "or" ) Value Comment?
//
// With -X verbose every operand may carry its comment
// ("0 /* AT_STATX_SYNC_AS_STAT */|0x800 /* AT_NO_AUTOMOUNT */").
// value.go reads them (participle.Parseable).
type Expr struct {
	Node
	Head    Value
	Comment string // after Head
	Tail    []*BinOp
}

// BinOp is one operator and its right operand.
type BinOp struct {
	Node
	Op      string
	X       Value
	Comment string // after X
}

// Value is an operand: *Int, *Ident, *Str, *Struct, *Array, *BitSet,
// *Ellipsis, *Ref, *Resuming or *Remark. Which one is decided by the first
// token (leaves.go): the single-token operands are read there, the others
// by their productions below.
type Value interface{ node }

// Int is a number as strace wrote it (decimal, octal, hex, or a fraction),
// with the -y decoration of the file descriptor or pid it names.
type Int struct {
	Node
	Text  string
	Decor *Decor
}

// Ident is a symbolic constant (O_RDONLY, NULL, AT_FDCWD), or a call
// expression when it has arguments (makedev(0x8, 0x1), htons(80),
// inet_addr("127.0.0.1")), with an optional decoration (AT_FDCWD</root>).
type Ident struct {
	Node
	Name  string `parser:"@Ident"`
	Call  *Tuple `parser:"@@?"`
	Decor *Decor `parser:"@Decor?"`
}

// Tuple is the parenthesised argument list of a call expression.
type Tuple struct {
	Node
	Args []*Arg `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
}

// Str is a quoted string exactly as strace quoted it, with the "..." of a
// truncated string.
type Str struct {
	Node
	Quoted string
}

// Struct is "{name=value, ...}".
type Struct struct {
	Node
	Fields []*Arg `parser:"'{' ( @@ ( ',' @@ )* )? '}'"`
}

// Array is "[a, b, c]".
type Array struct {
	Node
	Elems []*Arg `parser:"'[':Punct ( @@ ( ',' @@ )* )? ']'"`
}

// BitSet is a space-separated set such as a signal mask "[INT TERM]", its
// complement "~[RTMIN RT_1]", or a CPU set "[0 1]".
type BitSet struct {
	Node
	Not  bool    `parser:"@'~'?"`
	Bits []*Expr `parser:"BitOpen @@* ']'"`
}

// Ellipsis is the "..." strace prints for members it left out.
type Ellipsis struct {
	Node
}

// Ref is an address-of operand ("&sin6_addr" in inet_pton).
type Ref struct {
	Node
	Name string
}

// Resuming is restart_syscall's "<... resuming interrupted read ...>".
type Resuming struct {
	Node
	Text string
}

// Remark is a comment standing where a value would ("[/* 35 vars */]").
type Remark struct {
	Node
	Text string
}

// Node is the position bookkeeping every AST node carries. Pos and EndPos
// are filled by the parser; EndPos is where the next token starts, so a
// node's text is the source between them less trailing blanks. A node built
// in code has no position and prints in strace's style; a parsed node
// prints its source text unless it or something inside it was edited.
type Node struct {
	Pos    lexer.Position `parser:""`
	EndPos lexer.Position `parser:""`
	edited bool
}

// Touch marks a node changed in place, so the printer regenerates it
// instead of copying its source text.
func (n *Node) Touch() { n.edited = true }

func (n *Node) header() *Node { return n }

// node is implemented by every AST type.
type node interface {
	header() *Node
	// children calls fn on each direct child in source order.
	children(fn func(node))
	// canon prints the node in strace's style, children through p.
	canon(p *printer)
}
