package anomalies

import (
	"strings"
	"testing"
)

// The rename-exdev checker on a hand-written naive fallback: each missing
// piece is reported.
func TestExdevCheckerNaive(t *testing.T) {
	tr := readTrace(t, "testdata/exdev-naive.strace")
	a, _ := Lookup("rename-exdev")
	fs := a.Check(tr.Lines)
	if !Failed(fs) {
		t.Fatal("a naive fallback passes")
	}
	var all []string
	for _, f := range fs {
		all = append(all, f.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"mode was not carried over",
		"whether the owner was carried over",
		"timestamps were not carried over",
		"extended attributes not carried over to /b/dst: user.a",
		"line 9: the source /a/src was removed before the copy was complete",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("findings lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "bytes were written") {
		t.Errorf("all 12 bytes were written, but:\n%s", text)
	}
}
