package suite

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// SiteInfo says where in the recording a check of an audit applies.
type SiteInfo struct {
	Line   int    `json:"line"`             // line of the recorded trace holding the call's result
	Call   string `json:"call"`             // the call, shortened
	Stands int    `json:"stands_for"`       // how many calls of the recording it stands for
	Which  string `json:"which,omitempty"`  // "first" or "last" of them
	Select string `json:"select,omitempty"` // the selector that picks exactly this call
}

// Site is one place where an anomaly of the catalogue applies, with the
// selector that picks exactly that call.
type Site struct {
	Anomaly  string
	Selector mutators.Selector
	Info     SiteInfo
}

// Sites returns the distinct call sites of the trace where the anomaly
// applies.
//
// Calls the anomaly can change are grouped by call name and what they
// work on: the first path they name (resolved to absolute where the trace
// allows), else their descriptor, else nothing. From each group the first
// and the last call are tried. The first is where the program meets the
// anomaly on that file for the first time (its error path at open time);
// the last is where it is finishing with it (the final read at end of
// file, the last write before close). The calls in between take the same
// code path as one of those in nearly every program, so 300 reads of one
// file give two checks, not 300.
func Sites(t *mutators.Trace, a *anomalies.Anomaly) ([]Site, error) {
	calls, err := t.Calls()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.File, err)
	}
	type group struct {
		sel   mutators.Selector
		calls []*mutators.Call
	}
	var order []string
	groups := map[string]*group{}
	for _, c := range calls {
		if !a.Mutation.Match(&mutators.Site{Call: c, Calls: calls, Trace: t}) {
			continue
		}
		text := siteSelector(c)
		g, ok := groups[text]
		if !ok {
			sel, err := mutators.ParseSelector(text)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: building a selector for %s: %w", t.File, lineOf(c), c.Name, err)
			}
			g = &group{sel: sel}
			groups[text] = g
			order = append(order, text)
		}
		g.calls = append(g.calls, c)
	}
	var out []Site
	for _, text := range order {
		g := groups[text]
		picks := []int{0}
		if len(g.calls) > 1 {
			picks = append(picks, len(g.calls)-1)
		}
		for _, i := range picks {
			c := g.calls[i]
			nth := nthOf(t, calls, a, g.sel, c)
			sel, err := mutators.ParseSelector(text + ",nth=" + strconv.Itoa(nth))
			if err != nil {
				return nil, err
			}
			which := ""
			if len(g.calls) > 1 {
				which = map[bool]string{true: "first", false: "last"}[i == 0]
			}
			out = append(out, Site{
				Anomaly:  a.Name,
				Selector: sel,
				Info: SiteInfo{Line: lineOf(c), Call: shortCall(c), Stands: len(g.calls),
					Which: which, Select: sel.String()},
			})
		}
	}
	return out, nil
}

// nthOf counts the call among those the selector and the anomaly accept,
// exactly as mutators.Apply will, so nth picks this call and no other.
func nthOf(t *mutators.Trace, calls []*mutators.Call, a *anomalies.Anomaly, sel mutators.Selector, target *mutators.Call) int {
	n := 0
	for _, c := range calls {
		if !sel.Matches(c) || !a.Mutation.Match(&mutators.Site{Call: c, Calls: calls, Trace: t}) {
			continue
		}
		n++
		if c == target {
			return n
		}
	}
	return n
}

// siteSelector is the textual selector of a call's group.
func siteSelector(c *mutators.Call) string {
	s := "syscall=" + c.Name
	if ps := c.Paths(); len(ps) > 0 && ps[0] != "" {
		return s + ",path=" + globQuote(ps[0])
	}
	if fds := c.FDs(); len(fds) > 0 {
		return s + ",fd=" + strconv.FormatInt(fds[0], 10)
	}
	return s
}

// globQuote makes a path a glob that matches it: glob metacharacters are
// escaped, and characters the selector syntax itself uses (',' between
// keys, spaces trimmed at the ends) become '?'. nthOf counts with the same
// glob, so a '?' that also matches a neighbour cannot pick the wrong call.
func globQuote(p string) string {
	var b strings.Builder
	for i, r := range p {
		switch {
		case r == '*' || r == '?' || r == '[' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ',' || r == '|' || r == '\'' || r == '"' || r < ' ' || ((i == 0 || i == len(p)-1) && r == ' '):
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func lineOf(c *mutators.Call) int { return c.Lines[len(c.Lines)-1].Pos.Line }

// shortCall is the call as strace printed it, cut to fit a table cell.
func shortCall(c *mutators.Call) string {
	var b strings.Builder
	for _, l := range c.Lines {
		if _, ok := l.Body.(*parser.Call); ok || len(c.Lines) == 1 {
			_ = parser.Fprint(&b, l)
			break
		}
	}
	s := strings.TrimSpace(b.String())
	s = strings.TrimSpace(pidPrefix().ReplaceAllString(s, ""))
	if i := strings.LastIndex(s, ") = "); i > 0 {
		s = s[:i+1]
	} else if i := strings.Index(s, " <unfinished"); i > 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	const max = 60
	if len(s) > max {
		s = s[:max-3] + "..."
	}
	return s
}
