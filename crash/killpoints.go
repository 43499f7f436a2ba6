package crash

import (
	"context"
	"fmt"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
)

// killPoints are the calls before which a kill is tried: every metadata
// call that touches the sandbox (as the trace shows them), and the first
// write through each descriptor of a sandbox file after it was opened or
// truncated. Killed before a metadata call, a program leaves what it had
// done since the last one; killed before its first write, a program that
// truncated a file in place leaves it empty (sort -o, an editor that
// rewrites in place), a state no expected snapshot holds.
func killPoints(plan *replayPlan, sandbox string) []*mutators.Call {
	meta := newMetaTracker(sandbox)
	calls, _ := plan.trace.Calls()
	// Only the program's own calls (the plan holds them, not the inserted
	// lines) can be stopped.
	own := map[int]*mutators.Call{}
	for _, cs := range plan.calls {
		for _, c := range cs {
			own[c.Index] = c
		}
	}
	fresh := map[fdKey]bool{} // opened or truncated, not written since
	var out []*mutators.Call
	for _, c := range calls {
		pc, ok := own[c.Index]
		if !ok {
			continue
		}
		point := meta.isMetadataEntry(c.Pid, c.Syscall)
		switch {
		case returnsFD(c.Name) && c.Succeeded():
			if fd, ok := c.ResultInt(); ok && len(c.FDPaths()) > 0 && meta.inSandbox(c.FDPaths()[0]) {
				fresh[fdKey{c.Pid, fd}] = true
			}
		case c.Name == "ftruncate" && c.Succeeded():
			if fd, ok := c.IntArg(0); ok {
				fresh[fdKey{c.Pid, fd}] = true
			}
		default:
			if i, isWrite := writtenFDArg[c.Name]; isWrite {
				if fd, ok := c.IntArg(i); ok && fresh[fdKey{c.Pid, fd}] {
					delete(fresh, fdKey{c.Pid, fd})
					point = true
				}
			}
		}
		if point {
			out = append(out, pc)
		}
		meta.isMetadata(c.Pid, c.Syscall)
	}
	return out
}

func returnsFD(name string) bool {
	switch name {
	case "open", "openat", "openat2", "creat":
		return true
	}
	return false
}

// checkKillPoints replays the trace once per kill point, SIGKILLs the
// program before that call, and judges the sandbox it leaves (no power
// loss: everything the program did before is visible).
func (c *Check) checkKillPoints(ctx context.Context, sb *sandbox, fs blockrec.FSType, tr *mutators.Trace, es *oracle.ExpectedSet) ([]oracle.Finding, int, error) {
	plan, err := newReplayPlan(tr)
	if err != nil {
		return nil, 0, err
	}
	points := killPoints(plan, sb.dir)
	c.progress(StageKill, 0, len(points))
	if len(points) == 0 {
		return nil, 0, nil
	}
	kill := func(i int, call *mutators.Call) (*blockrec.Snapshot, error) {
		return c.killSupervised(ctx, sb, fs, tr, call)
	}
	if c.OwnReplay {
		if _, err := sb.mount(fs, c.size()); err != nil {
			return nil, 0, err
		}
		defer sb.unmount()
		kill = func(i int, call *mutators.Call) (*blockrec.Snapshot, error) {
			if i > 0 {
				if err := sb.reset(); err != nil {
					return nil, err
				}
			}
			plan.killAt = call
			defer func() { plan.killAt = nil }()
			res, err := c.replay(ctx, sb, plan, func(int64) {})
			if err != nil {
				return nil, err
			}
			if !res.killed {
				return nil, fmt.Errorf("the program never reached the call (%s)", res.divergence)
			}
			return blockrec.Walk(sb.dir)
		}
	}
	var findings []oracle.Finding
	for i, call := range points {
		snap, err := kill(i, call)
		if err != nil {
			return nil, i, fmt.Errorf("kill point %d (before line %d): %w", i, call.Index+1, err)
		}
		c.progress(StageKill, i+1, len(points))
		v := oracle.Check(snap, es.All(), c.tolerance())
		if v.Consistent {
			continue
		}
		f := oracle.NewFinding(oracle.Kill, i, snap, v)
		f.Line = int64(call.Index + 1)
		f.LineText = lineText(tr, f.Line)
		f.Unamplified = "not applicable"
		findings = append(findings, f)
	}
	return findings, len(points), nil
}
