package anomalies

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The names issue 4 requires, each of which must be in the catalogue.
var required = []string{
	"rename-exdev", "filetype-chr", "filetype-blk", "filetype-fifo", "filetype-sock", "filetype-lnk",
	"filetype-dir", "fsync-eio", "fdatasync-eio", "fsync-lies", "write-enospc", "write-edquot",
	"write-efbig", "write-short", "read-eio", "read-eintr", "read-einval", "read-short", "open-eacces",
	"open-emfile", "open-erofs", "open-eloop", "close-eio", "close-eintr", "unlink-ebusy",
	"unlink-eperm", "inode-changed", "nlink-many", "file-grows", "clock-back", "clock-forward",
	"connect-econnreset", "connect-etimedout", "accept-nonblock", "kill",
}

func TestCatalogueComplete(t *testing.T) {
	for _, n := range required {
		a, ok := Lookup(n)
		if !ok {
			t.Errorf("%s is not in the catalogue", n)
			continue
		}
		if a.Summary == "" || a.Situation == "" || a.Expected == "" || len(a.Touches) == 0 || a.Mutation.Wants == "" {
			t.Errorf("%s: incomplete entry", n)
		}
		if strings.Contains(a.Summary, "\n") {
			t.Errorf("%s: the summary must be one line", n)
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rename-exdv", "rename-exdev"},
		{"fsync-eoi", "fsync-eio"},
		{"filetype", "filetype-blk"},
		{"write-enopsc", "write-enospc"},
	}
	for _, tt := range tests {
		got := Suggest(tt.in)
		if len(got) == 0 || !has(got, tt.want) {
			t.Errorf("Suggest(%q) = %v, want it to include %s", tt.in, got, tt.want)
		}
	}
	if got := Suggest("zzzzzzzzzzzz"); len(got) != 0 {
		t.Errorf("Suggest of nonsense = %v", got)
	}
}

// Every entry applied to the hand-written forms trace: the output is
// golden, parses, and differs from the input only at marked lines.
func TestGoldenForms(t *testing.T) {
	in := readTrace(t, "testdata/forms.strace")
	for _, a := range All() {
		t.Run(a.Name, func(t *testing.T) {
			out, err := a.Apply(in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.String()
			checkOnlyMarked(t, in, got)
			golden := filepath.Join("testdata", "forms."+a.Name+".golden")
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

func readTrace(t *testing.T, name string) *mutators.Trace {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := mutators.Read(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// checkOnlyMarked walks the edited text against the input: every line is
// the input's next line byte for byte, or a kept original ("# faultline:
// was: X", X being the input's next line) followed by the edited line
// carrying a tampering note where it has a result, or an inserted line
// after its own comment. It returns the number of changed and inserted
// lines; at least one must exist.
func checkOnlyMarked(t *testing.T, in *mutators.Trace, out string) (changed, inserted int) {
	t.Helper()
	src := strings.Split(strings.TrimSuffix(in.String(), "\n"), "\n")
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range got {
		if _, err := parser.ParseLine("out", i+1, l); err != nil {
			t.Fatalf("output line %d does not parse: %v", i+1, err)
		}
	}
	j := 0
	was := "# " + mutators.WasPrefix
	ins := "# " + mutators.InsertedPrefix
	for i := 0; i < len(got); i++ {
		l := got[i]
		switch {
		case strings.HasPrefix(l, was) && j < len(src) && !strings.HasPrefix(src[j], was):
			orig := strings.TrimPrefix(l, was)
			if j >= len(src) || src[j] != orig {
				t.Fatalf("output line %d keeps %q, but the input's line %d is %q", i+1, orig, j+1, src[j])
			}
			i++
			if i >= len(got) || got[i] == orig {
				t.Fatalf("output line %d: kept original not followed by a changed line", i)
			}
			pl, _ := parser.ParseLine("out", i+1, got[i])
			var r *parser.Result
			switch b := pl.Body.(type) {
			case *parser.Call:
				r = b.Result
			case *parser.Resumed:
				r = b.Result
			}
			if r != nil && !r.Injected() {
				t.Errorf("output line %d is changed but has no (INJECTED) note: %s", i+1, got[i])
			}
			changed++
			j++
		case strings.HasPrefix(l, ins):
			i++
			inserted++
		default:
			if j >= len(src) || src[j] != l {
				t.Fatalf("output line %d %q is neither marked nor the input's line %d", i+1, l, j+1)
			}
			j++
		}
	}
	if j != len(src) {
		t.Fatalf("the output lost input lines from %d on", j+1)
	}
	if changed+inserted == 0 {
		t.Fatalf("nothing was changed")
	}
	return changed, inserted
}

func TestNoMatchIsTyped(t *testing.T) {
	in := readTrace(t, "testdata/forms.strace")
	a, _ := Lookup("fsync-eio")
	sel, err := mutators.ParseSelector("path=*.nothing")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Apply(in, sel)
	var nm *mutators.NoMatchError
	if !errors.As(err, &nm) || nm.Selector != "path=*.nothing" {
		t.Fatalf("got %v, want a NoMatchError naming the selector", err)
	}
}
