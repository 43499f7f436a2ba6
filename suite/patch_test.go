package suite

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline/faultline/mutators"
)

// rerecorded imitates a second recording of the same run: another pid,
// other addresses (ASLR), another random seed and other times.
func rerecorded(t *testing.T, tr *mutators.Trace) *mutators.Trace {
	t.Helper()
	text := tr.String()
	text = strings.ReplaceAll(text, "15615", "20001")
	text = regexp.MustCompile(`0x7f[0-9a-f]+`).ReplaceAllStringFunc(text, func(s string) string {
		n, _ := strconv.ParseUint(s[2:], 16, 64)
		return fmt.Sprintf("0x%x", n+0x123000)
	})
	text = regexp.MustCompile(`getrandom\("[^"]*"`).ReplaceAllString(text, `getrandom("\x01\x02\x03\x04\x05\x06\x07\x08"`)
	text = regexp.MustCompile(`tv_sec=\d+`).ReplaceAllString(text, "tv_sec=1700000000")
	out, err := mutators.Read("rerecorded", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestApplyPatch(t *testing.T) {
	patch, err := os.ReadFile("testdata/gzip-fstat-chr.patch")
	if err != nil {
		t.Fatal(err)
	}
	orig := readTrace(t, "testdata/gzip.strace")
	shifted := string(patch)
	shifted = strings.Replace(shifted, "@@ -52,7 +52,7 @@", "@@ -40,7 +40,7 @@", 1)

	tests := []struct {
		name  string
		trace *mutators.Trace
		patch string
		want  string // a line of the result
		err   string
	}{
		{name: "the recording it was made from", trace: orig, patch: string(patch),
			want: "15615 newfstatat(4</tmp/fl-sites/f>, \"\", {st_mode=S_IFCHR|0644, st_size=168894, ...}, AT_EMPTY_PATH) = 0\n"},
		{name: "a fresh recording: other pid, addresses, seed", trace: rerecorded(t, orig), patch: string(patch),
			want: "20001 newfstatat(4</tmp/fl-sites/f>, \"\", {st_mode=S_IFCHR|0644, st_size=168894, ...}, AT_EMPTY_PATH) = 0\n"},
		{name: "the hunk moved", trace: orig, patch: shifted,
			want: "{st_mode=S_IFCHR|0644"},
		{name: "context that is not there", trace: orig,
			patch: strings.Replace(string(patch), ` 15615 openat(3</tmp/fl-sites>, "f"`, ` 15615 openat(3</tmp/fl-sites>, "g"`, 1),
			err:   `hunk 1 (@@ -52,7 +52,7 @@) matches nowhere in the recording; at line 52 the patch expects`},
		{name: "an edit that is not strace", trace: orig,
			patch: strings.Replace(string(patch), "+15615 newfstatat(4</tmp/fl-sites/f>, \"\", {", "+15615 newfstatat(4</tmp/fl-sites/f>, \"\", {{", 1),
			err:   "the edited trace is not valid strace text"},
		{name: "two files", trace: orig, patch: string(patch) + strings.ReplaceAll(string(patch), "gzip.strace", "other.strace"),
			err: "it edits 2 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyPatch("edit.patch", []byte(tt.patch), tt.trace)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			text := got.String()
			if !strings.Contains(text, tt.want) {
				t.Errorf("result has no %q", tt.want)
			}
			// Only the one line changed, marked as a mutation marks it,
			// with the recording's own line kept.
			a, b := strings.Split(tt.trace.String(), "\n"), strings.Split(text, "\n")
			var kept []string
			for i, l := range b {
				if strings.HasPrefix(l, "# "+mutators.WasPrefix) {
					if was := strings.TrimPrefix(l, "# "+mutators.WasPrefix); !strings.Contains(was, "S_IFREG") || !strings.Contains(b[i+1], "S_IFCHR") {
						t.Errorf("kept %q before %q", was, b[i+1])
					}
					continue
				}
				kept = append(kept, l)
			}
			if len(kept) != len(b)-1 {
				t.Errorf("%d kept-original comments, want 1", len(b)-len(kept))
			}
			b = kept
			if len(a) != len(b) {
				t.Fatalf("%d lines became %d", len(a), len(b))
			}
			diff := 0
			for i := range a {
				if a[i] != b[i] {
					diff++
				}
			}
			if diff != 1 {
				t.Errorf("%d lines differ, want 1", diff)
			}
		})
	}
	var pe *PatchError
	_, err = ApplyPatch("x.patch", []byte(strings.Replace(string(patch), " 15615 brk(NULL)", " 15615 brk(0)", 1)), orig)
	if !errors.As(err, &pe) || pe.Hunk != 1 || !strings.Contains(pe.Found, "brk(NULL)") {
		t.Errorf("PatchError %+v", err)
	}
}
