package crash

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
)

// profile is what the profiling run leaves: the program's own trace and
// the expected snapshots, positioned on that trace's lines.
type profile struct {
	trace  *mutators.Trace
	es     []profileES
	status string // how the program ended
	output string // the tail of its stdout and stderr, for error messages
}

// profileES is an expected snapshot taken after a line of the profile
// trace (index into trace.Lines; -1 for the start).
type profileES struct {
	index int
	label string
	snap  *blockrec.Snapshot
}

// runProfile runs the program traced in the populated sandbox and, after
// each metadata call that touched it, with the program still stopped,
// walks the sandbox.
func (c *Check) runProfile(ctx context.Context, sb *sandbox) (*profile, error) {
	p := &profile{}
	start, err := blockrec.Walk(sb.dir)
	if err != nil {
		return nil, fmt.Errorf("walking the populated sandbox: %w", err)
	}
	p.es = append(p.es, profileES{index: -1, label: "start", snap: start})

	var out bytes.Buffer
	meta := newMetaTracker(sb.dir)
	entry := map[int]*parser.Call{} // each thread's call in flight, as decoded at entry
	tgid := map[int]int{}
	var walkErr error
	io, err := sb.programIO()
	if err != nil {
		return nil, err
	}
	defer io.close()
	cmd := &tracer.Cmd{
		Path: c.Argv[0], Args: c.Argv, Env: c.Env, Dir: sb.dir, SyncDir: sb.dir,
		Follow: true, DecodeFDs: true, StringLimit: 256,
		Output: &out, Tool: toolName, HeaderExtra: sb.headerLines(c.fs()),
		Stdin: io.stdin, Stdout: io.out, Stderr: io.out,
		Hooks: tracer.Hooks{
			Enter: func(s *tracer.Stop) {
				entry[s.Tid] = s.Call
				tgid[s.Tid] = s.Tgid
			},
		},
		Completed: func(tid int, line *parser.Line, lineNo int) {
			sc := completedCall(tid, line, entry[tid])
			if sc == nil || !meta.isMetadata(tgid[tid], sc) {
				return
			}
			snap, err := blockrec.Walk(sb.dir)
			if err != nil {
				if walkErr == nil {
					walkErr = fmt.Errorf("walking the sandbox after line %d: %w", lineNo, err)
				}
				return
			}
			p.es = append(p.es, profileES{index: lineNo - 1, label: "after " + sc.Name, snap: snap})
		},
	}
	if err := c.runTraced(ctx, cmd, "profiling run"); err != nil {
		return nil, err
	}
	if walkErr != nil {
		return nil, walkErr
	}
	p.status = describeStatus(cmd.Status)
	p.output = io.tail()
	tr, err := mutators.Read("profile trace", &out)
	if err != nil {
		return nil, fmt.Errorf("reading back the profile trace: %w", err)
	}
	p.trace = tr
	end, err := blockrec.Walk(sb.dir)
	if err != nil {
		return nil, fmt.Errorf("walking the sandbox after the run: %w", err)
	}
	p.es = append(p.es, profileES{index: len(tr.Lines) - 1, label: "end", snap: end})
	return p, nil
}

// completedCall joins a completed line with the entry half its thread
// started, when the call was split.
func completedCall(tid int, line *parser.Line, entry *parser.Call) *parser.Syscall {
	switch b := line.Body.(type) {
	case *parser.Call:
		if b.Result == nil {
			return nil
		}
		return &parser.Syscall{Pid: tid, Name: b.Name, Args: b.Args, Result: b.Result, Lines: []*parser.Line{line}}
	case *parser.Resumed:
		if entry == nil || b.Result == nil {
			return nil
		}
		return &parser.Syscall{Pid: tid, Name: entry.Name, Args: entry.Args, Result: b.Result, Lines: []*parser.Line{line}}
	}
	return nil
}

// expectedSet positions the profile's snapshots on the lines of tr, a trace
// derived from the profile trace by insertions (which share the profile's
// line objects), and builds the oracle's set. Lines are 1-based.
func (p *profile) expectedSet(tr *mutators.Trace) (*oracle.ExpectedSet, error) {
	at := make(map[*parser.Line]int, len(tr.Lines))
	for i, l := range tr.Lines {
		at[l] = i
	}
	var es oracle.ExpectedSet
	for _, e := range p.es {
		pos := int64(0)
		if e.index >= 0 {
			i, ok := at[p.trace.Lines[e.index]]
			if !ok {
				return nil, fmt.Errorf("profile line %d is missing from the amplified trace", e.index+1)
			}
			pos = int64(i + 1)
		}
		es.Add(pos, e.label, e.snap)
	}
	return &es, nil
}

// lineText is a trace line without its pid prefix noise, shortened for a
// report.
func lineText(tr *mutators.Trace, pos int64) string {
	if pos <= 0 || int(pos) > len(tr.Lines) {
		return ""
	}
	var b strings.Builder
	if err := parser.Fprint(&b, tr.Lines[pos-1]); err != nil {
		return ""
	}
	s := strings.TrimRight(b.String(), "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
