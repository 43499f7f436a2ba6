package crash

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/supervisor"
)

// recordSupervised replays tr with supervisor.Replay in a sandbox on a
// fresh recording disk, shown to the program at the same path as in the
// profiling run, filled from the profiling run's populated files. The
// supervisor performs the inserted sync and commit points in the
// program's context and feeds each line's position to the block log; it
// syncs and unmounts the disk when the program ends, the log recording.
func (c *Check) recordSupervised(ctx context.Context, sb *sandbox, fs blockrec.FSType, tr *mutators.Trace) (*recording, error) {
	if sb.template == "" {
		return nil, errors.New("the sandbox was never populated")
	}
	tr, err := renumbered(tr)
	if err != nil {
		return nil, err
	}
	box := &supervisor.Sandbox{Dir: sb.dir, Init: sb.template, FS: string(fs), Size: c.size(), Umask: -1}
	if err := box.Open(ctx); err != nil {
		return nil, fmt.Errorf("opening the recording sandbox: %w", err)
	}
	defer box.Close()
	io, err := sb.programIO()
	if err != nil {
		return nil, err
	}
	defer io.close()
	rec := box.Recorder()
	r := &supervisor.Replay{
		Trace: tr, Sandbox: box, Timeout: c.timeout(), Tool: toolName,
		Stdin: io.stdin, Stdout: io.out, Stderr: io.out,
		OnPosition: rec.SetPosition,
	}
	rep, err := r.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("replaying the amplified trace: %w", err)
	}
	out := &recording{log: rec.Log()}
	if rep.Diverged && rep.Divergence != nil {
		out.divergence = fmt.Sprintf("%+v", *rep.Divergence)
	}
	out.status = fmt.Sprintf("exited with %d", rep.ExitStatus)
	if rep.Signal != "" {
		out.status = "killed by " + rep.Signal
	}
	return out, nil
}

// renumbered is tr as the supervisor must see it: written out and read
// back, so every line's position is its line number in the saved text.
// The supervisor positions lines by where they were parsed; inserted lines
// were never parsed and the others carry their place in the unamplified
// trace.
func renumbered(tr *mutators.Trace) (*mutators.Trace, error) {
	var text bytes.Buffer
	if err := tr.Write(&text); err != nil {
		return nil, fmt.Errorf("writing the trace: %w", err)
	}
	out, err := mutators.Read(tr.File, &text)
	if err != nil {
		return nil, fmt.Errorf("reading back the trace: %w", err)
	}
	return out, nil
}

// withKill is tr with the program killed right before call: the kill line
// the supervisor performs, and the comment saying why.
func withKill(tr *mutators.Trace, call *mutators.Call, why string) *mutators.Trace {
	at := call.Index
	for at > 0 && tr.Lines[at] != call.Lines[0] {
		at--
	}
	lines := make([]*parser.Line, 0, len(tr.Lines)+2)
	lines = append(lines, tr.Lines[:at]...)
	lines = append(lines, parser.NewComment(mutators.InsertedPrefix+why), parser.NewLine(call.Pid, mutators.KillEvent()))
	lines = append(lines, tr.Lines[at:]...)
	return &mutators.Trace{File: tr.File, Lines: lines}
}

// killSupervised replays tr killed before call, in a sandbox on the same
// file system as the other runs, and walks what the program leaves. The
// walk happens when the supervisor reaches the kill line, with the program
// stopped right before the kill: nothing it does after that point exists,
// and the disk sandbox is unmounted once the replay ends.
func (c *Check) killSupervised(ctx context.Context, sb *sandbox, fs blockrec.FSType, tr *mutators.Trace, call *mutators.Call) (*blockrec.Snapshot, error) {
	killed, err := renumbered(withKill(tr, call, fmt.Sprintf("kill point before line %d", call.Index+1)))
	if err != nil {
		return nil, err
	}
	killLine := int64(-1)
	for i, l := range killed.Lines {
		if e, ok := l.Body.(*parser.Exit); ok && e.KilledBy != "" {
			killLine = int64(i + 1)
			break
		}
	}
	box := &supervisor.Sandbox{Dir: sb.dir, Init: sb.template, FS: string(fs), Size: c.size(), Umask: -1}
	if err := box.Open(ctx); err != nil {
		return nil, fmt.Errorf("opening the sandbox: %w", err)
	}
	defer box.Close()
	io, err := sb.programIO()
	if err != nil {
		return nil, err
	}
	defer io.close()
	var snap *blockrec.Snapshot
	var walkErr error
	rep, err := (&supervisor.Replay{
		Trace: killed, Sandbox: box, Timeout: c.timeout(), Tool: toolName,
		Stdin: io.stdin, Stdout: io.out, Stderr: io.out,
		OnPosition: func(pos int64) {
			if pos == killLine && snap == nil {
				snap, walkErr = blockrec.Walk(box.HostDir())
			}
		},
	}).Run(ctx)
	if err != nil {
		return nil, err
	}
	if walkErr != nil {
		return nil, fmt.Errorf("walking the sandbox: %w", walkErr)
	}
	performed := false
	for _, in := range rep.Injections {
		performed = performed || (in.Kind == "kill" && int64(in.Line) == killLine)
	}
	if snap == nil || !performed {
		why := fmt.Sprint("it ", rep.Outcome)
		if rep.Divergence != nil {
			why = fmt.Sprintf("%+v", *rep.Divergence)
		}
		return nil, fmt.Errorf("the program was not killed there: %s", why)
	}
	return snap, nil
}
