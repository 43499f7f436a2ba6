package anomalies

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// Anomaly is one entry of the catalogue.
type Anomaly struct {
	Name      string
	Summary   string   // one line
	Situation string   // the real-world situation, a paragraph
	Touches   []string // the calls the mutation changes
	Expected  string   // what a program that handles it does
	Mutation  *mutators.Mutation
	Checks    []Check // run on the replayed trace; may be empty
}

// Each family's file registers its entries with family(func() {
// register(...) }). The entries are built on first use, not at start-up:
// every command links the catalogue, few look in it.
var (
	families []func()
	entries  map[string]*Anomaly // filled by register while catalogue runs
)

func family(f func()) bool {
	families = append(families, f)
	return true
}

var catalogue = sync.OnceValue(func() map[string]*Anomaly {
	entries = map[string]*Anomaly{}
	for _, f := range families {
		f()
	}
	return entries
})

// register adds entries to the catalogue being built.
func register(as ...*Anomaly) {
	for _, a := range as {
		if _, dup := entries[a.Name]; dup {
			panic("anomalies: " + a.Name + " registered twice")
		}
		if a.Mutation.Name == "" {
			a.Mutation.Name = a.Name
		}
		entries[a.Name] = a
	}
}

// All returns the catalogue sorted by name.
func All() []*Anomaly {
	out := make([]*Anomaly, 0, len(catalogue()))
	for _, a := range catalogue() {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds an entry by name.
func Lookup(name string) (*Anomaly, bool) {
	a, ok := catalogue()[name]
	return a, ok
}

// Apply writes the anomaly into a trace at the selected calls.
func (a *Anomaly) Apply(t *mutators.Trace, sels ...mutators.Selector) (*mutators.Trace, error) {
	out, err := mutators.Apply(t, a.Mutation, sels...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name, err)
	}
	return out, nil
}

// Check runs the entry's checks on a replayed trace.
func (a *Anomaly) Check(lines []*parser.Line) []Finding {
	var out []Finding
	for _, c := range a.Checks {
		for _, f := range c.Run(lines) {
			f.Check = c.Name
			out = append(out, f)
		}
	}
	return out
}

// Explain is the full text `faultline anomalies NAME` prints.
func (a *Anomaly) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", a.Name, a.Summary)
	fmt.Fprintf(&b, "Situation\n%s\n\n", wrap(a.Situation, 76, "  "))
	fmt.Fprintf(&b, "Touches\n  %s\n\n", strings.Join(a.Touches, ", "))
	fmt.Fprintf(&b, "Mutation\n%s\n\n", wrap("Changes "+a.Mutation.Wants+".", 76, "  "))
	fmt.Fprintf(&b, "Expected handling\n%s\n", wrap(a.Expected, 76, "  "))
	if len(a.Checks) > 0 {
		b.WriteString("\nChecks on the replayed trace\n")
		for _, c := range a.Checks {
			fmt.Fprintf(&b, "%s\n", wrap(c.Name+": "+c.Doc, 76, "  "))
		}
	}
	return b.String()
}

func wrap(s string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(s) {
		if i == 0 || col+1+len(w) > width {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(indent)
			b.WriteString(w)
			col = len(indent) + len(w)
			continue
		}
		b.WriteByte(' ')
		b.WriteString(w)
		col += 1 + len(w)
	}
	return b.String()
}

// Suggest returns the names closest to a misspelt one (edit distance at
// most a third of the name, at least 2), nearest first; names that contain
// it or that it contains come too.
func Suggest(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(name)/3)
	for n := range catalogue() {
		d := distance(name, n)
		if d <= limit || (len(name) >= 3 && (strings.Contains(n, name) || strings.Contains(name, n))) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
