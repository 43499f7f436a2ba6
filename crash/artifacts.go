package crash

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
	"github.com/faultline/faultline/parser"
)

// artifacts writes what reproduces a finding under the --out directory:
// the amplified trace once, and per finding group a directory with the
// crash image, the trace with the crash point marked and a README holding
// the command that mounts the image.
type artifacts struct {
	dir   string
	trace *mutators.Trace
}

// writeTrace saves the amplified trace whose line numbers the report uses.
func (a *artifacts) writeTrace() (string, error) {
	p := filepath.Join(a.dir, "trace.txt")
	if err := blockrec.WriteFileAtomic(p, a.trace.Write); err != nil {
		return "", fmt.Errorf("saving the trace: %w", err)
	}
	return abs(p), nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// forGroup writes finding-N/ for a group's representative finding.
func (a *artifacts) forGroup(n int, g *oracle.Group, l *blockrec.Log, sites map[int]blockrec.Site) (*oracle.Artifacts, error) {
	f := &g.Finding
	dir := filepath.Join(a.dir, fmt.Sprintf("finding-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := &oracle.Artifacts{Dir: abs(dir), Trace: abs(filepath.Join(dir, "trace.txt"))}
	marked := a.marked(f)
	if err := blockrec.WriteFileAtomic(out.Trace, marked.Write); err != nil {
		return nil, fmt.Errorf("saving the marked trace: %w", err)
	}
	if site, ok := sites[f.Site]; ok && f.Kind == oracle.PowerLoss {
		out.Image = abs(filepath.Join(dir, "crash.img"))
		if err := blockrec.WriteSiteImage(l, site, out.Image); err != nil {
			return nil, fmt.Errorf("saving the crash image of site %d: %w", site.ID, err)
		}
		mnt := fmt.Sprintf("/mnt/faultline-finding-%d", n)
		opts := "ro"
		if l.FS == blockrec.XFS {
			opts = "ro,nouuid"
		}
		// A read-only loop device would stop the journal replay the
		// oracle saw; a writable one lets the kernel replay it into the
		// file, the mount itself stays read-only.
		out.Mount = fmt.Sprintf("mkdir -p %s && mount -t %s -o %s \"$(losetup --find --show %s)\" %s", mnt, l.FS, opts, shellQuote(out.Image), mnt)
	}
	readme := func(w io.Writer) error {
		var b strings.Builder
		if f.Kind == oracle.Kill {
			fmt.Fprintf(&b, "faultline crash finding %d: the program SIGKILLed before trace line %d (kill point %d)\n\n", n, f.Line, f.Site)
			fmt.Fprintf(&b, "trace.txt   the trace with the kill inserted: the '+++ killed by SIGKILL +++' line before line %d\n", f.Line+2)
		} else {
			fmt.Fprintf(&b, "faultline crash finding %d: power loss after trace line %d (site %d, epoch %d)\n\n", n, f.Line, f.Site, f.Epoch)
			fmt.Fprintf(&b, "trace.txt   the replayed trace; the crash point is the '# faultline: crash point' comment after line %d\n", f.Line)
		}
		if out.Image != "" {
			fmt.Fprintf(&b, "crash.img   the disk image the crash leaves (before journal recovery)\n\n")
			fmt.Fprintf(&b, "inspect:\n  %s\n", out.Mount)
			fmt.Fprintf(&b, "afterwards:\n  umount /mnt/faultline-finding-%d && losetup -d <the device printed by losetup -j %s>\n", n, shellQuote(out.Image))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	if err := blockrec.WriteFileAtomic(filepath.Join(dir, "README.txt"), readme); err != nil {
		return nil, err
	}
	return out, nil
}

// marked is the trace with the crash point marked: a comment after the
// line a power loss follows, or the kill itself (a line the replay
// performs) before the call a kill point stops.
func (a *artifacts) marked(f *oracle.Finding) *mutators.Trace {
	lines := make([]*parser.Line, 0, len(a.trace.Lines)+2)
	at := int(f.Line) // insert after this many lines
	var ins []*parser.Line
	if f.Kind == oracle.Kill {
		at = int(f.Line) - 1 // before the call
		pid := 0
		if at >= 0 && at < len(a.trace.Lines) {
			pid = a.trace.Lines[at].Prefix.Pid.N
		}
		ins = append(ins, parser.NewComment(mutators.InsertedPrefix+fmt.Sprintf("crash point: kill point %d, before line %d", f.Site, f.Line)),
			parser.NewLine(pid, mutators.KillEvent()))
	} else {
		text := fmt.Sprintf("faultline: crash point: power loss here (site %d, epoch %d", f.Site, f.Epoch)
		if len(f.DroppedWrites) > 0 {
			var ds []string
			for _, d := range f.DroppedWrites {
				ds = append(ds, fmt.Sprintf("log entry %d", d.Entry))
			}
			text += ", dropping " + strings.Join(ds, ", ")
		}
		ins = append(ins, parser.NewComment(text+")"))
	}
	at = max(0, min(at, len(a.trace.Lines)))
	lines = append(lines, a.trace.Lines[:at]...)
	lines = append(lines, ins...)
	lines = append(lines, a.trace.Lines[at:]...)
	return &mutators.Trace{File: a.trace.File, Lines: lines}
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
