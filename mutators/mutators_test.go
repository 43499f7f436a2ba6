package mutators

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/parser"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func readSmall(t *testing.T) *Trace {
	t.Helper()
	f, err := os.Open("testdata/small.strace")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read("testdata/small.strace", f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// failRename is a small mutation for the machinery's tests.
var failRename = &Mutation{
	Name:  "fail-rename",
	Wants: "a successful rename",
	Match: All(Named("rename"), Succeeded),
	Edit:  FailWith("EXDEV", "Invalid cross-device link"),
}

var killAfter = &Mutation{
	Name: "kill", Wants: "any call", Once: true,
	Match: func(*Site) bool { return true },
	Edit:  func(s *Site) error { s.Insert("kill: the process is killed here", KillEvent()); return nil },
}

func mustSel(t *testing.T, s string) Selector {
	t.Helper()
	sel, err := ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// Golden outputs: each case applies mutations in sequence to small.strace.
func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		steps func(t *testing.T, tr *Trace) (*Trace, error)
	}{
		{"rename-all", func(t *testing.T, tr *Trace) (*Trace, error) { return Apply(tr, failRename) }},
		{"rename-split-pid", func(t *testing.T, tr *Trace) (*Trace, error) {
			return Apply(tr, failRename, mustSel(t, "pid=101"))
		}},
		{"rename-path-glob", func(t *testing.T, tr *Trace) (*Trace, error) {
			return Apply(tr, failRename, mustSel(t, "path=/work/out"))
		}},
		{"sync-points", func(t *testing.T, tr *Trace) (*Trace, error) { return Apply(tr, SyncPoints(false)) }},
		{"sync-points-wide", func(t *testing.T, tr *Trace) (*Trace, error) { return Apply(tr, SyncPoints(true)) }},
		{"commit-points", func(t *testing.T, tr *Trace) (*Trace, error) { return Apply(tr, CommitPoints()) }},
		{"composed", func(t *testing.T, tr *Trace) (*Trace, error) {
			tr, err := Apply(tr, failRename, mustSel(t, "syscall=rename,nth=1"))
			if err != nil {
				return nil, err
			}
			tr, err = Apply(tr, killAfter, mustSel(t, "syscall=%file,path=*.tmp,nth=2"))
			if err != nil {
				return nil, err
			}
			// The same line again: the recorded original stays the one kept.
			return Apply(tr, &Mutation{Name: "retag", Wants: "a failed rename",
				Match: func(s *Site) bool { return s.Call.Name == "rename" && s.Call.Result.Failed() },
				Edit:  FailWith("EPERM", "Operation not permitted")}, mustSel(t, "nth=1"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := readSmall(t)
			before := in.String()
			out, err := tt.steps(t, in)
			if err != nil {
				t.Fatal(err)
			}
			if in.String() != before {
				t.Fatal("Apply changed its input trace")
			}
			got := out.String()
			checkParses(t, got)
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n%s", golden, got)
			}
		})
	}
}

// checkParses parses every output line again and checks that edited
// lines are preceded by their original and marked.
func checkParses(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		pl, err := parser.ParseLine("out", i+1, l)
		if err != nil {
			t.Fatalf("output line %d does not parse: %v", i+1, err)
		}
		if strings.HasPrefix(l, "# "+WasPrefix) {
			if i+1 >= len(lines) {
				t.Fatalf("line %d: kept original at the end of the trace", i+1)
			}
			next, _ := parser.ParseLine("out", i+2, lines[i+1])
			if strings.HasPrefix(lines[i+1], "#") {
				continue // a split call: the other half's comment follows
			}
			_ = pl
			if r := resultOf(next); r != nil && !r.Injected() {
				if _, isCall := next.Body.(*parser.Call); isCall && !next.Body.(*parser.Call).Pending.Unfinished() {
					t.Errorf("line %d: edited line has no (INJECTED) note: %s", i+2, lines[i+1])
				}
			}
		}
	}
}

func resultOf(l *parser.Line) *parser.Result {
	switch b := l.Body.(type) {
	case *parser.Call:
		return b.Result
	case *parser.Resumed:
		return b.Result
	}
	return nil
}

func TestSelectorErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"sycall=rename", `unknown key "sycall"`},
		{"syscall=", `key "syscall" needs a value`},
		{"syscall=%files", `unknown class "%files"`},
		{"nth=0", `nth="0" is not a positive number`},
		{"nth=x", `nth="x"`},
		{"fd=three", `fd="three" is not a number`},
		{"pid=-4", `pid="-4"`},
		{"path=[", `bad glob "["`},
		{"all=1", `"all" takes no value`},
		{"nth=1,nth=2", `key "nth" given twice`},
	}
	for _, tt := range tests {
		_, err := ParseSelector(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSelector(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestSelectorMatches(t *testing.T) {
	tr := readSmall(t)
	calls, err := tr.Calls()
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		sel := mustSel(t, s)
		n := 0
		for _, c := range calls {
			if sel.Matches(c) {
				n++
			}
		}
		return n
	}
	tests := []struct {
		sel  string
		want int
	}{
		{"all", len(calls)},
		{"syscall=rename", 2},
		{"syscall=rename|unlink", 3},
		{"syscall=%desc", 6}, // openat×2, write×2, fsync, close
		{"path=*.tmp", 8},    // the opens, the fd paths of write×2, fsync, close, the renames' sources
		{"path=/work/log.old", 1},
		{"fd=3", 3}, // write, fsync, close (openat's first argument is AT_FDCWD)
		{"pid=101", 4},
		{"syscall=%process", 4},
	}
	for _, tt := range tests {
		if got := count(tt.sel); got != tt.want {
			t.Errorf("%s matches %d calls, want %d", tt.sel, got, tt.want)
		}
	}
}

func TestNoMatch(t *testing.T) {
	tr := readSmall(t)
	tests := []struct{ sel, want string }{
		{"syscall=fsync", `matches 1 call(s), but none is one fail-rename changes (a successful rename)`},
		{"path=*.nothing", `matches no call in the trace`},
		{"syscall=rename,nth=3", `only 2 call(s) match for fail-rename, so there is no nth=3`},
	}
	for _, tt := range tests {
		_, err := Apply(tr, failRename, mustSel(t, tt.sel))
		var nm *NoMatchError
		if !errors.As(err, &nm) {
			t.Fatalf("%s: got %v, want a *NoMatchError", tt.sel, err)
		}
		if nm.Selector != tt.sel || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %q, want it to name the selector and say %q", tt.sel, err, tt.want)
		}
	}
	// Any of several selectors matching nothing is an error.
	if _, err := Apply(tr, failRename, mustSel(t, "pid=100"), mustSel(t, "pid=7")); err == nil || !strings.Contains(err.Error(), `"pid=7"`) {
		t.Errorf("second selector matching nothing: got %v", err)
	}
}

func TestInsertedFormsParse(t *testing.T) {
	for _, b := range []parser.Body{SyncCall(), DirFsyncCall("/work/a dir"), KillEvent()} {
		l := parser.NewLine(42, b)
		text := l.String()
		pl, err := parser.ParseLine("t", 1, text)
		if err != nil {
			t.Fatalf("%q does not parse: %v", text, err)
		}
		if c, ok := pl.Body.(*parser.Call); ok && c.Name == "fsync" {
			d := c.Args[0].Value.Head.(*parser.Int).Decor
			if d.Path() != "/work/a dir" {
				t.Errorf("fsync of a directory: decoration gives %q", d.Path())
			}
		}
	}
}

// TestPathsWithoutDecorations: a trace recorded without -y still selects
// read, write and close lines by path, through the opens, dups and forks
// the trace shows.
func TestPathsWithoutDecorations(t *testing.T) {
	const text = `10 openat(AT_FDCWD, "/d/a.txt", O_RDONLY) = 3
10 openat(AT_FDCWD, "/d/b.tmp", O_WRONLY|O_CREAT, 0644) = 4
10 dup(4) = 5
10 read(3, "x", 1) = 1
10 close(4) = 0
10 write(5, "y", 1) = 1
10 clone(child_stack=NULL, flags=SIGCHLD) = 11
11 fsync(5) = 0
10 close(3) = 0
10 openat(AT_FDCWD, "/d/c", O_RDONLY) = 3
10 close(3) = 0
`
	tr, err := Read("t.strace", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := tr.Calls()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sel := mustSel(t, "path=*.tmp")
	for _, c := range calls {
		if sel.Matches(c) {
			got = append(got, fmt.Sprintf("%s@%d", c.Name, lineNo(c)))
		}
	}
	want := []string{"openat@2", "dup@3", "close@5", "write@6", "fsync@8"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("path=*.tmp selects %v, want %v", got, want)
	}
	if n := countMatches(calls, mustSel(t, "syscall=close,path=c")); n != 1 {
		t.Errorf("close of the reused fd 3 matched %d times, want 1 (the table must follow the reopen)", n)
	}
}

func countMatches(calls []*Call, s Selector) int {
	n := 0
	for _, c := range calls {
		if s.Matches(c) {
			n++
		}
	}
	return n
}
