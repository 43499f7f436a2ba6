// Package parser owns faultline's trace language: the text strace 6.x
// prints, read line by line into a typed AST and printed back.
//
// The grammar is the AST in ast.go (participle struct tags); lexer.go is a
// hand-written lexer for the context-sensitive bits of strace's output;
// leaves.go picks a value's production by its first token. Printing is
// exact: a parsed line prints as its source bytes, and an edited or built
// node prints in strace's own style (print.go), so a mutation changes only
// what it touches. reader.go streams a file with flat memory; join.go pairs
// the halves of calls split by "<unfinished ...>".
//
// The package knows nothing of ptrace, replay or file systems and imports
// nothing of faultline's: every other package builds on it.
package parser
