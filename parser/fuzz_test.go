package parser

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseLine: no input panics; whatever parses prints back exactly; and
// the canonical print of what parses parses again to the same canonical
// print (the printer only writes what the parser reads).
func FuzzParseLine(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.strace")
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLine("fuzz", 1, s)
		if err != nil {
			return
		}
		if got := l.String(); got != s {
			t.Fatalf("printed back differently\n\tgot  %q\n\twant %q", got, s)
		}
		l.Raw = ""
		c1 := l.String()
		l2, err := ParseLine("fuzz", 1, c1)
		if err != nil {
			t.Fatalf("canonical print %q of %q does not parse: %v", c1, s, err)
		}
		l2.Raw = ""
		if c2 := l2.String(); c2 != c1 {
			t.Fatalf("canonical print is not stable\n\t%q\n\t%q\n\tfrom %q", c1, c2, s)
		}
	})
}
