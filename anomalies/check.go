package anomalies

import (
	"fmt"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// Check inspects a replayed trace for how the program handled an anomaly.
type Check struct {
	Name string
	Doc  string // what it requires, one sentence
	Run  func(lines []*parser.Line) []Finding
}

// Severity says whether a finding fails the check.
type Severity string

const (
	// Fail: the program did not do what a correct handling does.
	Fail Severity = "fail"
	// Note: worth knowing, but the reference program does the same
	// (GNU mv does not fsync before removing the source).
	Note Severity = "note"
)

// Finding is one thing a check found.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Line     int      `json:"line,omitempty"` // trace line it is about, 0 if none
	Message  string   `json:"message"`
}

func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s: %s: line %d: %s", f.Severity, f.Check, f.Line, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s", f.Severity, f.Check, f.Message)
}

// Failed reports whether any finding fails its check.
func Failed(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Fail {
			return true
		}
	}
	return false
}

// fdTable follows which file each (process, descriptor) names, from -y
// decorations where the trace has them and from the opens that returned
// the descriptors otherwise. Checks use it to tell which calls touch a
// file.
type fdTable map[[2]int64]string

// track updates the table with a call.
func (t fdTable) track(c *mutators.Call) {
	pid := int64(c.Pid)
	switch c.Name {
	case "open", "openat", "openat2", "creat":
		if r, ok := c.Result.Int(); ok && c.Succeeded() {
			if _, rs := c.PathArgs(); len(rs) > 0 {
				t[[2]int64{pid, r}] = rs[0]
			}
		}
	case "close":
		if fd, _, ok := c.FD(); ok {
			delete(t, [2]int64{pid, fd})
		}
	}
}

// path is the file a descriptor argument names: its -y decoration, or
// what the table knows.
func (t fdTable) path(c *mutators.Call, fd int64, argIndex int) string {
	if argIndex >= 0 && argIndex < len(c.Args) && c.Args[argIndex].Value != nil {
		if n, ok := c.Args[argIndex].Value.Head.(*parser.Int); ok && n.Decor != nil {
			if p := n.Decor.Path(); p != "" {
				return p
			}
		}
	}
	return t[[2]int64{int64(c.Pid), fd}]
}

// targets are the files a call acts on: its resolved path arguments and
// the files its descriptor arguments name.
func (t fdTable) targets(c *mutators.Call) []string {
	_, out := c.PathArgs()
	for i, a := range c.Args {
		if a.Value == nil {
			continue
		}
		if n, ok := a.Value.Head.(*parser.Int); ok && n.Decor != nil {
			if p := n.Decor.Path(); p != "" {
				out = append(out, p)
				continue
			}
		}
		if i == 0 && isFDCall(c.Name) {
			if fd, ok := c.IntArg(0); ok {
				if p := t[[2]int64{int64(c.Pid), fd}]; p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func isFDCall(name string) bool {
	return mutators.InClass("desc", name) && !mutators.InClass("file", name) || name == "utimensat" || name == "newfstatat" || name == "statx"
}

func has(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// lineOf is the trace line number a call's result is on.
func lineOf(c *mutators.Call) int { return c.Lines[len(c.Lines)-1].Pos.Line }
