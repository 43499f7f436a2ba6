package mutators

import (
	"fmt"
	"sort"

	"github.com/faultline/faultline/parser"
)

// Mutation is one kind of trace edit: which calls it can change and how.
// Catalogue entries (package anomalies) and the amplifiers here are
// Mutations; Apply runs one over a trace with selectors.
type Mutation struct {
	Name string
	// Wants says in words which calls Match accepts, for the error when a
	// selector picks none of them ("a successful fsync or fdatasync").
	Wants string
	// Match reports whether the mutation can change the site's call. It
	// sees the whole input trace through the site, read-only.
	Match func(s *Site) bool
	// Edit changes the call through s.Edit and s.SetResult, and/or inserts
	// lines after it with s.Insert.
	Edit func(s *Site) error
	// Once limits the mutation to the first selected call when no nth is
	// given: a process is killed once.
	Once bool
}

// NoMatchError is a selector that picked no call the mutation can change.
type NoMatchError struct {
	Mutation string
	Wants    string
	Selector string
	Selected int // calls passing the selector's filters
	Eligible int // of those, calls the mutation can change
	Nth      int
}

func (e *NoMatchError) Error() string {
	switch {
	case e.Nth > 0 && e.Eligible > 0:
		return fmt.Sprintf("selector %q: only %d call(s) match for %s, so there is no nth=%d",
			e.Selector, e.Eligible, e.Mutation, e.Nth)
	case e.Selected > 0:
		return fmt.Sprintf("selector %q matches %d call(s), but none is one %s changes (%s)",
			e.Selector, e.Selected, e.Mutation, e.Wants)
	default:
		return fmt.Sprintf("selector %q matches no call in the trace (%s changes %s)",
			e.Selector, e.Mutation, e.Wants)
	}
}

// Apply runs the mutation over the trace and returns the edited trace; the
// input is not changed (edited lines are copies, the others are shared).
// With several selectors a call is changed when any of them picks it; each
// selector must pick at least one call, or Apply returns a *NoMatchError.
// Without selectors every call the mutation matches is changed (the first
// only, for a Once mutation).
func Apply(t *Trace, m *Mutation, sels ...Selector) (*Trace, error) {
	calls, err := t.Calls()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.File, err)
	}
	if len(sels) == 0 {
		sels = []Selector{{Text: "all"}}
	}
	chosen := map[int]bool{}
	for _, sel := range sels {
		var eligible []int
		selected := 0
		for _, c := range calls {
			if !sel.Matches(c) {
				continue
			}
			selected++
			if m.Match(&Site{Call: c, Calls: calls, Trace: t}) {
				eligible = append(eligible, c.Seq)
			}
		}
		switch {
		case sel.Nth > 0 && sel.Nth <= len(eligible):
			eligible = eligible[sel.Nth-1 : sel.Nth]
		case sel.Nth > 0, len(eligible) == 0:
			return nil, &NoMatchError{Mutation: m.Name, Wants: m.Wants, Selector: sel.String(),
				Selected: selected, Eligible: len(eligible), Nth: sel.Nth}
		case m.Once:
			eligible = eligible[:1]
		}
		for _, seq := range eligible {
			chosen[seq] = true
		}
	}
	seqs := make([]int, 0, len(chosen))
	for s := range chosen {
		seqs = append(seqs, s)
	}
	sort.Ints(seqs)

	var ed editor
	for _, seq := range seqs {
		s := &Site{Call: calls[seq], Calls: calls, Trace: t}
		if err := m.Edit(s); err != nil {
			return nil, fmt.Errorf("%s: line %d: %s: %w", t.File, lineNo(calls[seq]), m.Name, err)
		}
		if err := ed.record(t, s); err != nil {
			return nil, err
		}
	}
	return ed.build(t), nil
}

func lineNo(c *Call) int { return c.Lines[len(c.Lines)-1].Pos.Line }

// Site is one selected call with the trace around it.
type Site struct {
	Call  *Call   // the call as it stands in the input: read only
	Calls []*Call // every call of the input; Calls[Call.Seq] == Call
	Trace *Trace  // the input: read only

	edit    *parser.Syscall
	clones  []*parser.Line
	inserts []*parser.Line
}

// Edit returns the call to change: its lines are copies of the input's,
// made on first use, so the input trace stays as it was.
func (s *Site) Edit() *parser.Syscall {
	if s.edit == nil {
		s.edit, s.clones = cloneCall(s.Trace.File, s.Call)
	}
	return s.edit
}

// SetResult replaces the call's result, on the line that holds it. The -T
// duration of the old result is kept.
func (s *Site) SetResult(r *parser.Result) {
	sc := s.Edit()
	if old := sc.Result; old != nil && r.Outcome.Duration == "" {
		r.Outcome.Duration = old.Outcome.Duration
	}
	switch b := s.clones[len(s.clones)-1].Body.(type) {
	case *parser.Call:
		b.Result = r
	case *parser.Resumed:
		b.Result = r
	}
	sc.Result = r
}

// Prev returns the calls before this one, nearest first, for fn until it
// returns false.
func (s *Site) Prev(fn func(*Call) bool) {
	for i := s.Call.Seq - 1; i >= 0; i-- {
		if !fn(s.Calls[i]) {
			return
		}
	}
}

// Next returns the calls after this one in order, for fn until it returns
// false.
func (s *Site) Next(fn func(*Call) bool) {
	for i := s.Call.Seq + 1; i < len(s.Calls); i++ {
		if !fn(s.Calls[i]) {
			return
		}
	}
}
