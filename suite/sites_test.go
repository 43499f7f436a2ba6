package suite

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

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

// TestSites lists an audit's sites on real recordings of gzip and sort,
// and checks that each selector picks exactly the call it names.
func TestSites(t *testing.T) {
	for _, name := range []string{"gzip", "sort"} {
		t.Run(name, func(t *testing.T) {
			tr := readTrace(t, "testdata/"+name+".strace")
			var b strings.Builder
			total := 0
			for _, an := range anomalies.All() {
				sites, err := Sites(tr, an)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range sites {
					total++
					fmt.Fprintf(&b, "%-16s %-50s line %-3d stands for %d %s\n", an.Name, s.Selector.String(), s.Info.Line, s.Info.Stands, s.Info.Which)
					// Applying it changes exactly one call, the one named.
					edited, err := an.Apply(tr, s.Selector)
					if err != nil {
						t.Errorf("%s %s: %v", an.Name, s.Selector, err)
						continue
					}
					if n := strings.Count(edited.String(), mutators.WasPrefix); an.Name != "kill" && !strings.HasPrefix(an.Name, "fsync-lies") && n != 1 && !strings.Contains(an.Name, "inode") {
						t.Errorf("%s %s: %d lines changed, want 1", an.Name, s.Selector, n)
					}
					if !strings.Contains(edited.String(), fmt.Sprintf("\n")) {
						t.Fatal("empty trace")
					}
				}
			}
			if total == 0 {
				t.Fatal("no sites at all")
			}
			golden(t, "sites-"+name+".txt", []byte(b.String()))
		})
	}
}

// TestSitesDedupe: the six reads of gzip's input are one group, tried at
// its first and last call.
func TestSitesDedupe(t *testing.T) {
	tr := readTrace(t, "testdata/gzip.strace")
	an, _ := anomalies.Lookup("read-eio")
	sites, err := Sites(tr, an)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sites {
		got = append(got, s.Selector.String()+" "+s.Info.Which)
	}
	want := []string{"syscall=read,path=/tmp/fl-sites/f,nth=1 first", "syscall=read,path=/tmp/fl-sites/f,nth=6 last"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGlobQuote(t *testing.T) {
	tests := []struct{ path, glob string }{
		{"/data/a.txt", "/data/a.txt"},
		{"/data/*x?[1]", `/data/\*x\?\[1]`},
		{"/data/a,b|c", "/data/a?b?c"},
		{"/data/it's", "/data/it?s"},
	}
	for _, tt := range tests {
		if g := globQuote(tt.path); g != tt.glob {
			t.Errorf("globQuote(%q) = %q, want %q", tt.path, g, tt.glob)
		}
		if !mutators.MatchPath(globQuote(tt.path), tt.path) {
			t.Errorf("%q does not match its own glob", tt.path)
		}
		if _, err := mutators.ParseSelector("path=" + globQuote(tt.path)); err != nil {
			t.Errorf("%q: %v", tt.path, err)
		}
	}
}
