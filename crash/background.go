package crash

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// Background writeback. The crash sites are cut at the flushes of the
// recorded re-run, each tagged with the trace line current when it came.
// A flush the program asked for comes at an fsync-family call (or a write
// to a file opened O_SYNC). One that comes at any other call was not the
// program's: the kernel's own writeback (a journal commit timer, memory
// pressure) or another process's sync(), which faultline cannot stop.
// What it wrote counts as durable from there, so crash states that would
// have lost it are never built, and a finding can disappear. The check
// cannot undo that; it says so in the report.

// durableCalls ask for durability themselves.
var durableCalls = map[string]bool{
	"fsync": true, "fdatasync": true, "sync": true, "syncfs": true,
	"sync_file_range": true, "msync": true,
}

// backgroundFlushes lists the trace lines at which flushes the program
// did not ask for reached the disk, in order, each once. Flushes before
// the first line, and from the last call on (the final sync and unmount
// come while its line is current), are the recording's own.
func backgroundFlushes(log *blockrec.Log, tr *mutators.Trace) []int64 {
	syncWrites := opensSync(tr)
	last := int64(0)
	for i, l := range tr.Lines {
		if callName(l) != "" {
			last = int64(i + 1)
		}
	}
	var lines []int64
	seen := map[int64]bool{}
	for _, e := range log.Entries {
		if e.Kind != blockrec.Flush || e.Pos <= 0 || e.Pos >= last || seen[e.Pos] {
			continue
		}
		name := callName(tr.Lines[e.Pos-1])
		if name == "" || durableCalls[name] {
			continue
		}
		if _, w := writtenFDArg[name]; w && syncWrites {
			continue
		}
		seen[e.Pos] = true
		lines = append(lines, e.Pos)
	}
	return lines
}

// opensSync reports whether the program opens any file for synchronous
// writes: then its writes may flush, and are not counted against it.
func opensSync(tr *mutators.Trace) bool {
	for _, l := range tr.Lines {
		c, ok := l.Body.(*parser.Call)
		if !ok || !strings.HasPrefix(c.Name, "open") && c.Name != "fcntl" {
			continue
		}
		var b strings.Builder
		parser.Fprint(&b, l)
		if s := b.String(); strings.Contains(s, "O_SYNC") || strings.Contains(s, "O_DSYNC") {
			return true
		}
	}
	return false
}

// callName is the call a line shows, either half of it; "" for others.
func callName(l *parser.Line) string {
	switch b := l.Body.(type) {
	case *parser.Call:
		return b.Name
	case *parser.Resumed:
		return string(b.Name)
	}
	return ""
}

// backgroundNote says what backgroundFlushes found, naming at most three
// of the lines.
func backgroundNote(lines []int64, tr *mutators.Trace) string {
	var at []string
	for i, l := range lines {
		if i == 3 {
			at = append(at, fmt.Sprintf("and %d more", len(lines)-3))
			break
		}
		at = append(at, fmt.Sprintf("line %d: %s", l, lineText(tr, l)))
	}
	return fmt.Sprintf("%d flush(es) reached the disk at calls that ask for no durability (%s): the kernel's own writeback or another process's sync(). "+
		"What they wrote counted as durable from there, so crash states that would have lost it were not checked; run the check again with nothing else syncing",
		len(lines), strings.Join(at, "; "))
}
