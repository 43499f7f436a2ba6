package supervisor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// The script is the trace turned into what lockstep needs: per process,
// its calls and its end in order, each knowing whether it was edited
// (an injection), inserted (for the supervisor to perform) or recorded.

// event is one call or exit of one traced thread.
type event struct {
	pid  int // the trace's pid (0 in a trace without pid prefixes)
	line int // line number of its first half in the trace
	call *parser.Syscall
	exit *parser.Exit
	sig  string // a signal delivered here ("SIGCHLD")

	edited       bool // preceded by "# faultline: was:" or marked INJECTED
	inserted     bool // preceded by "# faultline: inserted:"
	notPerformed bool // "(INJECTED: not performed)"
}

// text is the event as the trace has it (both halves joined for a split
// call).
func (e *event) text() string {
	switch {
	case e.exit != nil:
		return parser.Format(e.exit)
	case e.sig != "":
		return "--- " + e.sig + " ---"
	}
	return callText(e.call)
}

func callText(c *parser.Syscall) string {
	lc := &parser.Call{Name: c.Name, Args: c.Args, Result: c.Result}
	if c.Result == nil {
		lc.Result = parser.Unknown()
	}
	return parser.Format(lc)
}

// wantCall is the line as a parser.Call for tracer.Stop.Patch.
func (e *event) wantCall() *parser.Call {
	return &parser.Call{Name: e.call.Name, Args: e.call.Args, Result: e.call.Result}
}

// injection reports whether performing the event is an anomaly (as
// opposed to a benign inserted flush the program cannot see).
func (e *event) injection() bool {
	if e.exit != nil {
		return e.inserted
	}
	if e.sig != "" {
		return false
	}
	return e.edited || (e.inserted && !benignInserted[e.call.Name])
}

var benignInserted = map[string]bool{"sync": true, "syncfs": true, "fsync": true, "fdatasync": true}

type script struct {
	root     int              // the first process's trace pid
	threads  map[int][]*event // trace pid → its events
	children map[int][]int    // trace pid → the pids it created, in order
	lines    []*parser.Line   // the whole trace, for context in the report
	anomaly  int              // number of anomaly events in the trace
}

// newScript reads the trace's lines into per-thread event lists.
func newScript(t *mutators.Trace) (*script, error) {
	s := &script{threads: map[int][]*event{}, children: map[int][]int{}, lines: t.Lines, root: -1}
	var j parser.Joiner
	type marks struct{ edited, inserted bool }
	var pend marks             // from the comments just before a line
	open := map[int]marks{}    // marks of a split call's first half
	firstLine := map[int]int{} // first half's line of a split call
	add := func(e *event) {
		if s.root < 0 {
			s.root = e.pid
		}
		s.threads[e.pid] = append(s.threads[e.pid], e)
	}
	for _, l := range t.Lines {
		m := pend
		pend = marks{}
		switch b := l.Body.(type) {
		case *parser.Comment:
			text := strings.TrimSpace(strings.TrimPrefix(b.Text, "#"))
			switch {
			case strings.HasPrefix(text, mutators.WasPrefix):
				pend.edited = true
			case strings.HasPrefix(text, mutators.InsertedPrefix):
				pend.inserted = true
			default:
				pend = m // other comments do not separate a mark from its line
			}
			continue
		case *parser.Exit:
			pid := l.Prefix.Pid.N
			if s.root < 0 {
				s.root = pid
			}
			add(&event{pid: pid, line: l.Pos.Line, exit: b, inserted: m.inserted})
			continue
		case *parser.Signal:
			if !b.Stopped && b.Name != "" {
				add(&event{pid: l.Prefix.Pid.N, line: l.Pos.Line, sig: b.Name})
			}
			continue
		case *parser.Call, *parser.Resumed:
		default:
			continue
		}
		pid := l.Prefix.Pid.N
		if s.root < 0 {
			s.root = pid
		}
		if c, ok := l.Body.(*parser.Call); ok && c.Pending != "" {
			open[pid] = m
			firstLine[pid] = l.Pos.Line
		}
		sc, err := j.Add(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", t.File, l.Pos.Line, err)
		}
		if sc == nil {
			continue
		}
		first := l.Pos.Line
		if om, ok := open[pid]; ok && len(sc.Lines) > 1 {
			m.edited = m.edited || om.edited
			m.inserted = m.inserted || om.inserted
			first = firstLine[pid]
			delete(open, pid)
		}
		add(newCallEvent(sc, first, m.edited, m.inserted))
	}
	// Calls that never returned (the trace ends inside them).
	unf := j.Unfinished()
	sort.Slice(unf, func(a, b int) bool { return unf[a].Lines[0].Pos.Line < unf[b].Lines[0].Pos.Line })
	for _, sc := range unf {
		om := open[sc.Pid]
		add(newCallEvent(sc, sc.Lines[0].Pos.Line, om.edited, om.inserted))
	}
	if s.root < 0 {
		return nil, fmt.Errorf("%s: the trace has no calls", t.File)
	}
	for pid, evs := range s.threads {
		for _, e := range evs {
			if e.injection() {
				s.anomaly++
			}
			if e.call == nil || e.call.Result == nil || e.call.Result.Failed() {
				continue
			}
			switch e.call.Name {
			case "clone", "clone3", "fork", "vfork":
				if n, ok := e.call.Result.Int(); ok && n > 0 {
					s.children[pid] = append(s.children[pid], int(n))
				}
			}
		}
	}
	// The first execve of the first process is the one that started the
	// program: the tracer prints it without stopping there.
	if evs := s.threads[s.root]; len(evs) > 0 && evs[0].call != nil && evs[0].call.Name == "execve" {
		s.threads[s.root] = evs[1:]
	}
	return s, nil
}

func newCallEvent(sc *parser.Syscall, line int, edited, inserted bool) *event {
	e := &event{pid: sc.Pid, line: line, call: sc, edited: edited, inserted: inserted}
	if r := sc.Result; r != nil {
		if r.Injected() {
			e.edited = true
		}
		for _, n := range r.Outcome.Notes {
			if n == mutators.NotPerformed {
				e.notPerformed = true
			}
		}
	}
	return e
}
