// Package mutators holds faultline's generic trace-editing machinery: pure
// functions from one trace to another that describe an anomaly the way a
// person would in a text editor.
//
// # Layering
//
// DESIGN.md lets mutators import anomalies and anomalies import parser. We
// resolve it the other way round: this package holds only the machinery
// (Trace, Selector, Mutation, Apply, marking, insertion, sync-point and
// commit-point amplification) and imports nothing of ours but parser; the
// catalogue in package anomalies builds each entry's mutation from the
// primitives here, so anomalies imports mutators and parser. No cycle, and
// the machinery can be used (and tested) without the catalogue.
//
// # What a mutation writes
//
// Every line a mutation changes is edited through the AST, so the rest of
// the line keeps its bytes; its result gets strace's " (INJECTED)" note, and
// the original line is kept as a comment immediately before it:
//
//	# faultline: was: 4741  rename("a.tmp", "a")              = 0
//	4741  rename("a.tmp", "a")              = -1 EXDEV (Invalid cross-device link) (INJECTED)
//
// so `diff original edited` shows exactly the anomaly. When mutations are
// composed and a line is changed twice, only the first (recorded) original
// is kept. A call split by another thread ("<unfinished ...>" then
// "<... NAME resumed>") is edited as one call; each of its halves that
// changed gets its own kept-original comment, and the note goes on the
// half that holds the result.
//
// Inserted lines are new lines with the pid of the call they follow, each
// preceded by a comment saying why:
//
//	# faultline: inserted: sync point after openat(..., O_TRUNC)
//	4741  sync()                                  = 0
//
// # Special forms the supervisor must know
//
// An fsync of a directory the program never opened (a commit point) is
// written
//
//	# faultline: inserted: commit point: fsync of directory /abs/dir after rename
//	4741  fsync(-1</abs/dir>)                     = 0
//
// fd -1 can never be one of the program's descriptors, so the line cannot
// be mistaken for a call the program makes; the -y decoration names the
// directory exactly as strace prints paths (parser.Decor.Path decodes it).
// The supervisor performs it by opening that directory O_RDONLY|O_DIRECTORY
// in the sandbox, fsyncing and closing it. A person can write the same line
// by hand. The directory is absolute when the trace lets us resolve it
// (an absolute path, or a -y decoration on the dirfd or on AT_FDCWD); a
// relative directory is written as is and is relative to the program's
// working directory at that point.
//
// A call that returns success without being performed (fsync that lies)
// keeps its value and gets the note "(INJECTED: not performed)":
//
//	fsync(3</data/f>)                       = 0 (INJECTED: not performed)
//
// strace's own retval injection does not perform the call either; the
// explicit note tells the supervisor (which otherwise executes a succeeding
// line and patches its results) to skip it and return the line's value.
//
// # Selectors
//
// See ParseSelector for the textual form used on the command line.
package mutators
