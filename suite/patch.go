package suite

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/faultline/faultline/mutators"
)

// A hand edit is kept as a unified diff (`diff -u recorded edited`) next to
// the suite and applied to each fresh recording. A fresh recording is never
// byte for byte the one the diff was made from: process ids, addresses
// (ASLR), timestamps and -T durations change from run to run. So the diff
// is parsed by go-gitdiff, but applied here: each hunk's old lines must
// match the recording after both are normalised (pid prefixes and pids,
// hex numbers, time stamps and durations masked), at the hunk's line or the
// nearest place to it, as patch(1) looks for a hunk that moved; the added
// lines then get the recording's pids. Against a pinned recording (the
// suite's trace = ...) this is an exact apply.

// parsePatch reads a patch file that edits one trace.
func parsePatch(name string, data []byte) (*gitdiff.File, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("patch %s: %w", name, err)
	}
	switch {
	case len(files) == 0:
		return nil, fmt.Errorf("patch %s: no unified diff in it (make one with: diff -u recorded.strace edited.strace)", name)
	case len(files) > 1:
		return nil, fmt.Errorf("patch %s: it edits %d files; a trace edit changes one trace", name, len(files))
	case files[0].IsBinary:
		return nil, fmt.Errorf("patch %s: a binary patch cannot edit a trace", name)
	case len(files[0].TextFragments) == 0:
		return nil, fmt.Errorf("patch %s: it changes nothing", name)
	}
	return files[0], nil
}

// PatchError is a hunk that does not fit the recording.
type PatchError struct {
	Patch    string
	Hunk     int    // counting from 1
	Header   string // "@@ -40,3 +40,3 @@"
	Line     int    // line of the recording where the hunk should start
	Expected string // the patch's line that did not match
	Found    string // the recording's line there ("" past the end)
}

func (e *PatchError) Error() string {
	msg := fmt.Sprintf("patch %s: hunk %d (%s) matches nowhere in the recording", e.Patch, e.Hunk, e.Header)
	if e.Expected != "" {
		msg += fmt.Sprintf("; at line %d the patch expects\n\t%s\nbut the recording has\n\t%s", e.Line, e.Expected, e.Found)
	}
	return msg
}

// ApplyPatch applies a trace patch file to a recorded trace and returns the
// edited trace, parsed.
func ApplyPatch(patchFile string, patch []byte, t *mutators.Trace) (*mutators.Trace, error) {
	f, err := parsePatch(patchFile, patch)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Write(&buf); err != nil {
		return nil, fmt.Errorf("printing the recording: %w", err)
	}
	src := splitLines(buf.String())
	out, err := applyFragments(patchFile, f.TextFragments, src)
	if err != nil {
		return nil, err
	}
	text := strings.Join(out, "\n") + "\n"
	edited, err := mutators.Read(t.File+" + "+patchFile, strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("patch %s: the edited trace is not valid strace text: %w", patchFile, err)
	}
	return edited, nil
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func applyFragments(name string, frags []*gitdiff.TextFragment, src []string) ([]string, error) {
	srcPids := pidsOf(src)
	var out []string
	next := 0   // first source line not yet copied
	offset := 0 // how far earlier hunks were found from where they said
	for i, fr := range frags {
		var old, patchLines []string
		for _, l := range fr.Lines {
			text := strings.TrimSuffix(l.Line, "\n")
			patchLines = append(patchLines, text)
			if l.Old() {
				old = append(old, text)
			}
		}
		patchPids := pidsOf(patchLines)
		want := int(fr.OldPosition) - 1 + offset
		if fr.OldLines == 0 {
			want++ // a pure insertion names the line it follows
		}
		at := findHunk(src, old, next, want, patchPids, srcPids)
		if at < 0 {
			e := &PatchError{Patch: name, Hunk: i + 1, Header: strings.TrimSpace(fr.Header()), Line: want + 1}
			e.Expected, e.Found = firstMismatch(src, old, want, patchPids, srcPids)
			return nil, e
		}
		offset += at - want
		pidMap := mapPids(src[at:at+len(old)], old)
		out = append(out, src[next:at]...)
		out = hunkResult(out, name, fr, src[at:at+len(old)], pidMap)
		next = at + len(old)
	}
	return append(out, src[next:]...), nil
}

// hunkResult appends the hunk's result in order: the recording's own line
// for each context line, the patch's line for each added one. Each added
// line is marked the way a mutation marks its edits, since that is how
// the replay knows which lines are the anomaly: a line that replaces a
// removed one is preceded by "# faultline: was: <the recording's line>",
// a line with none to replace by "# faultline: inserted: ...". A patch
// that already carries such comments keeps its own.
func hunkResult(out []string, name string, fr *gitdiff.TextFragment, matched []string, pidMap map[string]string) []string {
	k := 0
	var removed []string // recording lines of the change under way
	for _, l := range fr.Lines {
		switch l.Op {
		case gitdiff.OpContext:
			out = append(out, matched[k])
			k++
			removed = removed[:0]
		case gitdiff.OpDelete:
			removed = append(removed, matched[k])
			k++
		case gitdiff.OpAdd:
			text := renamePids(strings.TrimSuffix(l.Line, "\n"), pidMap)
			marked := len(out) > 0 && strings.HasPrefix(out[len(out)-1], "# "+mutators.WasPrefix[:len("faultline:")])
			switch {
			case strings.HasPrefix(text, "#") || marked:
			case len(removed) > 0:
				out = append(out, "# "+mutators.WasPrefix+removed[0])
				removed = removed[1:]
			default:
				out = append(out, "# "+mutators.InsertedPrefix+"by the hand edit "+filepath.Base(name))
			}
			out = append(out, text)
		}
	}
	return out
}

// findHunk finds old in src at or after from, nearest to want.
func findHunk(src, old []string, from, want int, patchPids, srcPids map[string]bool) int {
	fits := func(at int) bool {
		if at < from || at+len(old) > len(src) {
			return false
		}
		for k, l := range old {
			if normalise(l, patchPids) != normalise(src[at+k], srcPids) {
				return false
			}
		}
		return true
	}
	for d := 0; d <= len(src); d++ {
		if fits(want + d) {
			return want + d
		}
		if d > 0 && fits(want-d) {
			return want - d
		}
	}
	return -1
}

func firstMismatch(src, old []string, at int, patchPids, srcPids map[string]bool) (expected, found string) {
	if at < 0 {
		at = 0
	}
	for k, l := range old {
		if at+k >= len(src) {
			return l, "(the end of the recording)"
		}
		if normalise(l, patchPids) != normalise(src[at+k], srcPids) {
			return l, src[at+k]
		}
	}
	return "", ""
}

// lazyRegexp compiles expr on first use: every command links this
// package, and compiling at start-up is paid by those that never match.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var (
	pidPrefix = lazyRegexp(`^(\[pid\s+)?(\d+)\]?\s+`)
	stamp     = lazyRegexp(`^(\d+:\d+:\d+(\.\d+)?|\d{9,}\.\d+|\d+\.\d{6})\s+`)
	hexNum    = lazyRegexp(`0x[0-9a-fA-F]+`)
	duration  = lazyRegexp(`\s*<\d+\.\d+>$`)
	word      = lazyRegexp(`\b\d+\b`)
	// What the clock and the random pool give differs on every run.
	clock  = lazyRegexp(`\b(tv_sec|tv_nsec|tv_usec|st_[amc]time(_nsec)?|stx_[abcm]time)=[-0-9.]+|/\* \d{4}-\d\d-\d\dT[^*]*\*/`)
	random = lazyRegexp(`^getrandom\("[^"]*"`)
)

// pidsOf is every process id a trace's lines begin with.
func pidsOf(lines []string) map[string]bool {
	pids := map[string]bool{}
	for _, l := range lines {
		if m := pidPrefix().FindStringSubmatch(l); m != nil {
			pids[m[2]] = true
		}
	}
	return pids
}

// normalise masks what differs between two recordings of the same run.
func normalise(l string, pids map[string]bool) string {
	if strings.HasPrefix(l, "#") {
		return l
	}
	l = pidPrefix().ReplaceAllString(l, "PID ")
	l = stamp().ReplaceAllString(strings.TrimPrefix(l, "PID "), "")
	l = duration().ReplaceAllString(l, "")
	l = hexNum().ReplaceAllString(l, "0x?")
	l = clock().ReplaceAllString(l, "T")
	l = random().ReplaceAllString(l, `getrandom("?"`)
	l = word().ReplaceAllStringFunc(l, func(n string) string {
		if pids[n] {
			return "PID"
		}
		return n
	})
	return strings.Join(strings.Fields(l), " ")
}

// mapPids pairs the patch's pids with the recording's from the lines the
// hunk matched.
func mapPids(matched, old []string) map[string]string {
	m := map[string]string{}
	for k := range old {
		a := pidPrefix().FindStringSubmatch(old[k])
		b := pidPrefix().FindStringSubmatch(matched[k])
		if a != nil && b != nil {
			m[a[2]] = b[2]
		}
	}
	return m
}

// renamePids rewrites an added line's pids into the recording's.
func renamePids(l string, m map[string]string) string {
	if len(m) == 0 || strings.HasPrefix(l, "#") {
		return l
	}
	return word().ReplaceAllStringFunc(l, func(n string) string {
		if r, ok := m[n]; ok {
			return r
		}
		return n
	})
}
