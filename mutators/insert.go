package mutators

import (
	"github.com/faultline/faultline/parser"
)

// Insert queues a line after the site's call, in the call's process, with
// a comment saying why. Inserted lines are new calls the program did not
// make (sync, fsync of a directory) or events (a kill); the supervisor
// performs them at that point of the replay.
func (s *Site) Insert(why string, b parser.Body) {
	l := parser.NewLine(s.Call.Pid, b)
	if first := s.Call.Lines[0]; first.Prefix.Pid.Bracket {
		l.Prefix.Pid.Bracket = true // keep the trace's pid style
	}
	s.inserts = append(s.inserts, parser.NewComment(InsertedPrefix+why), l)
}

// SyncCall is "sync() = 0".
func SyncCall() *parser.Call { return parser.NewCall("sync", nil, parser.Ret(parser.Dec(0))) }

// DirFsyncCall is the commit point "fsync(-1</dir>) = 0": an fsync of a
// directory the program never opened. See the package documentation.
func DirFsyncCall(dir string) *parser.Call {
	arg := parser.FD(-1, quoteDecor(dir))
	return parser.NewCall("fsync", []*parser.Arg{parser.Positional(arg)}, parser.Ret(parser.Dec(0)))
}

// KillEvent is "+++ killed by SIGKILL +++".
func KillEvent() *parser.Exit { return &parser.Exit{KilledBy: "SIGKILL"} }

// quoteDecor escapes a path as strace does inside a -y decoration: the
// string quoting without the quotes.
func quoteDecor(p string) string {
	q := parser.Quote([]byte(p), parser.QuoteDefault, false)
	return q[1 : len(q)-1]
}
