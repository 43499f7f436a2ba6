package mutators

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/parser"
)

// Marking: an edited line carries strace's tampering note and is preceded
// by its original text as a comment, so a diff shows the anomaly and the
// recorded line side by side.

// WasPrefix starts the comment that keeps a changed line's original text.
const WasPrefix = "faultline: was: "

// InsertedPrefix starts the comment before a line a mutation inserted.
const InsertedPrefix = "faultline: inserted: "

// Injected is strace's note on a tampered result.
const Injected = "(INJECTED)"

// NotPerformed is the note on a result the supervisor must return without
// performing the call (an fsync that lies).
const NotPerformed = "(INJECTED: not performed)"

// cloneCall copies a call's lines by reparsing their text and joins the
// copies again, so edits reach the copies' nodes.
func cloneCall(file string, c *Call) (*parser.Syscall, []*parser.Line) {
	clones := make([]*parser.Line, len(c.Lines))
	for i, l := range c.Lines {
		cl, err := parser.ParseLine(file, l.Pos.Line, l.String())
		if err != nil {
			// A line that parsed once prints as valid text; reaching this
			// is a printer bug, not bad input.
			panic(fmt.Sprintf("mutators: reparsing %s:%d: %v", file, l.Pos.Line, err))
		}
		cl.NoEOL = l.NoEOL
		clones[i] = cl
	}
	var j parser.Joiner
	var sc *parser.Syscall
	for _, cl := range clones {
		got, err := j.Add(cl)
		if err != nil {
			panic(fmt.Sprintf("mutators: rejoining %s:%d: %v", file, cl.Pos.Line, err))
		}
		if got != nil {
			sc = got
		}
	}
	if sc == nil { // never returned
		sc = j.Unfinished()[0]
	}
	return sc, clones
}

// markInjected adds strace's note to a result that has no tampering note.
func markInjected(r *parser.Result) {
	if r == nil || r.Injected() {
		return
	}
	r.Outcome.Notes = append(r.Outcome.Notes, Injected)
	r.Touch()
}

// editor collects the edits of one Apply and builds the new trace.
type editor struct {
	replace map[int]*parser.Line   // input index → edited copy
	before  map[int][]*parser.Line // comments before an input line
	after   map[int][]*parser.Line // lines inserted after an input line
}

// record takes a site's edits: changed lines are marked and queued to
// replace the input's, inserted lines queued after the call.
func (e *editor) record(t *Trace, s *Site) error {
	if e.replace == nil {
		e.replace = map[int]*parser.Line{}
		e.before = map[int][]*parser.Line{}
		e.after = map[int][]*parser.Line{}
	}
	if s.edit != nil {
		changed := false
		for i, cl := range s.clones {
			if cl.String() != s.Call.Lines[i].String() {
				changed = true
			}
		}
		if changed {
			markInjected(s.edit.Result)
			first := s.Call.Index - (len(s.Call.Lines) - 1)
			for i, cl := range s.clones {
				orig := s.Call.Lines[i]
				if cl.String() == orig.String() {
					continue
				}
				idx := lineIndex(t, orig, first)
				if idx < 0 {
					return fmt.Errorf("%s:%d: edited line not found in the trace", t.File, orig.Pos.Line)
				}
				e.replace[idx] = cl
				if !keptBefore(t, idx) {
					e.before[idx] = append(e.before[idx], parser.NewComment(WasPrefix+orig.String()))
				}
			}
		}
	}
	e.after[s.Call.Index] = append(e.after[s.Call.Index], s.inserts...)
	return nil
}

// lineIndex finds a line of the trace, searching forward from a hint (the
// first half of a split call is usually close before its result line).
func lineIndex(t *Trace, l *parser.Line, hint int) int {
	for i := max(hint, 0); i < len(t.Lines); i++ {
		if t.Lines[i] == l {
			return i
		}
	}
	for i := 0; i < len(t.Lines); i++ {
		if t.Lines[i] == l {
			return i
		}
	}
	return -1
}

// keptBefore reports whether an earlier mutation already kept the line's
// original: then the first (recorded) text is the one that stays.
func keptBefore(t *Trace, idx int) bool {
	if idx == 0 {
		return false
	}
	c, ok := t.Lines[idx-1].Body.(*parser.Comment)
	return ok && strings.HasPrefix(c.Text, "# "+WasPrefix)
}

func (e *editor) build(t *Trace) *Trace {
	out := &Trace{File: t.File, Lines: make([]*parser.Line, 0, len(t.Lines)+2*len(e.replace)+len(e.after))}
	for i, l := range t.Lines {
		out.Lines = append(out.Lines, e.before[i]...)
		if r, ok := e.replace[i]; ok {
			l = r
		}
		if ins := e.after[i]; len(ins) > 0 && l.NoEOL {
			// A line followed by inserted lines needs its newline.
			cp := *l
			cp.NoEOL = false
			l = &cp
		}
		out.Lines = append(out.Lines, l)
		out.Lines = append(out.Lines, e.after[i]...)
	}
	return out
}
