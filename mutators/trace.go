package mutators

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/parser"
)

// Trace is a whole trace in memory: mutations need to look back and ahead
// (the stat before a read, the open that returned an fd), so unlike the
// parser's streaming Scanner they hold every line. Lines are shared between
// a trace and the traces made from it; a mutation never edits a line in
// place, it replaces it by an edited copy.
type Trace struct {
	File  string // names the input in errors
	Lines []*parser.Line
}

// Read parses a whole trace. The first malformed line is an error naming
// file:line:col (a *parser.SyntaxError).
func Read(file string, r io.Reader) (*Trace, error) {
	t := &Trace{File: file}
	s := &parser.Scanner{File: file}
	err := s.Scan(context.Background(), r, func(l *parser.Line, err error) error {
		if err != nil {
			return err
		}
		t.Lines = append(t.Lines, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Write prints the trace; unedited lines come out byte for byte.
func (t *Trace) Write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	for _, l := range t.Lines {
		if err := parser.Fprint(bw, l); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// String is the printed trace, for tests and small traces.
func (t *Trace) String() string {
	var b strings.Builder
	_ = t.Write(&b)
	return b.String()
}

// Call is one logical system call of a trace with where it sits.
type Call struct {
	*parser.Syscall
	// Index is the position in Trace.Lines of the call's last line, the
	// one holding the result; inserted lines go after it.
	Index int
	// Seq is the call's position among the trace's calls.
	Seq int
	// Cwd is the working directory of the call's process as far as the
	// trace shows it (from -y decorations of AT_FDCWD), or "".
	Cwd string
	// opened are the paths of the call's descriptor arguments as the
	// trace's own opens, dups and closes name them (see fdTable).
	opened []string
}

// Calls joins the trace's lines into calls in the order they completed.
// Calls that never returned (killed or cut off) come last, with a nil
// Result.
func (t *Trace) Calls() ([]*Call, error) {
	var j parser.Joiner
	var out []*Call
	index := make(map[*parser.Line]int, len(t.Lines))
	cwd := map[int]string{}
	fds := fdTable{}
	for i, l := range t.Lines {
		index[l] = i
		if e, ok := l.Body.(*parser.Exit); ok && e.KilledBy != "" {
			j.Forget(l.Prefix.Pid.N)
			continue
		}
		sc, err := j.Add(l)
		if err != nil {
			return nil, fmt.Errorf("joining split calls: %w", err)
		}
		if sc == nil {
			continue
		}
		if d := cwdDecor(sc.Args); d != "" {
			cwd[sc.Pid] = d
		}
		c := &Call{Syscall: sc, Index: i, Seq: len(out), Cwd: cwd[sc.Pid]}
		c.opened = fds.paths(c)
		fds.update(c)
		out = append(out, c)
	}
	for _, sc := range j.Unfinished() {
		out = append(out, &Call{Syscall: sc, Index: index[sc.Lines[0]], Seq: len(out), Cwd: cwd[sc.Pid]})
	}
	return out, nil
}

// cwdDecor is the working directory -y prints on AT_FDCWD.
func cwdDecor(args []*parser.Arg) string {
	for _, a := range args {
		if a.Value == nil {
			continue
		}
		if id, ok := a.Value.Head.(*parser.Ident); ok && id.Name == "AT_FDCWD" && id.Decor != nil {
			return id.Decor.Path()
		}
	}
	return ""
}
