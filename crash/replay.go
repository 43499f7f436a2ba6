package crash

import (
	"context"
	"fmt"
	"strings"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
	"golang.org/x/sys/unix"
)

// replayPlan is a trace prepared for a live re-run of the same program:
// each process's calls in order, the lines faultline inserted after them
// (sync points, commit points) and, for a kill point, the call before
// which the program is killed.
//
// This is the part of replay a crash check needs: the program is expected
// to repeat its run (same input, same sandbox path), calls are matched to
// their lines by process and order to know the trace position, and the
// inserted lines are performed when the call before them returns. Results
// are not forced (supervisor.Replay does that for edited traces).
type replayPlan struct {
	trace *mutators.Trace
	// pids in order of first appearance; calls per pid, in order.
	pids   []int
	calls  map[int][]*mutators.Call
	after  map[*mutators.Call][]insertedLine
	killAt *mutators.Call
}

// insertedLine is a line to perform: index into trace.Lines and the call.
type insertedLine struct {
	index int
	call  *parser.Call
}

func newReplayPlan(tr *mutators.Trace) (*replayPlan, error) {
	calls, err := tr.Calls()
	if err != nil {
		return nil, fmt.Errorf("reading the trace's calls: %w", err)
	}
	inserted := map[int]bool{}
	for i, l := range tr.Lines {
		if c, ok := l.Body.(*parser.Comment); ok && i+1 < len(tr.Lines) && strings.Contains(c.Text, mutators.InsertedPrefix) {
			inserted[i+1] = true
		}
	}
	p := &replayPlan{trace: tr, calls: map[int][]*mutators.Call{}, after: map[*mutators.Call][]insertedLine{}}
	last := map[int]*mutators.Call{}
	for _, c := range calls {
		if inserted[c.Index] {
			b, ok := tr.Lines[c.Index].Body.(*parser.Call)
			if !ok {
				continue
			}
			prev := last[c.Pid]
			if prev == nil {
				return nil, fmt.Errorf("line %d: an inserted %s before the process made any call", c.Index+1, b.Name)
			}
			p.after[prev] = append(p.after[prev], insertedLine{index: c.Index, call: b})
			continue
		}
		if _, seen := p.calls[c.Pid]; !seen {
			p.pids = append(p.pids, c.Pid)
		}
		p.calls[c.Pid] = append(p.calls[c.Pid], c)
		last[c.Pid] = c
	}
	return p, nil
}

// lookahead is how many lines a live call may skip to find its match: the
// trace can show calls the hooks never see (the execve that started the
// program), and a program may make a call or two more or fewer than when
// it was recorded (a retried read, a signal).
const lookahead = 8

// replayResult says how a replay went.
type replayResult struct {
	status string
	// divergence is set when a live call did not match its line; positions
	// after it are approximate.
	divergence string
	killed     bool
	output     string
}

// replay runs the program again in the sandbox following the plan: pos is
// called with the 1-based trace line of each call as it starts and of each
// inserted line as it is performed.
func (c *Check) replay(ctx context.Context, sb *sandbox, plan *replayPlan, pos func(int64)) (*replayResult, error) {
	res := &replayResult{}
	tidPid := map[int]int{}
	next := map[int]int{}               // per tid: index of its next call in plan.calls
	current := map[int]*mutators.Call{} // per tid: the call in flight
	nthread := 0
	var performErr error
	diverge := func(format string, args ...any) {
		if res.divergence == "" {
			res.divergence = fmt.Sprintf(format, args...)
		}
	}
	io, err := sb.programIO()
	if err != nil {
		return nil, err
	}
	defer io.close()
	cmd := &tracer.Cmd{
		Path: c.Argv[0], Args: c.Argv, Env: c.Env, Dir: sb.dir, SyncDir: sb.dir, Follow: true,
		Stdin: io.stdin, Stdout: io.out, Stderr: io.out,
		Hooks: tracer.Hooks{
			NewThread: func(tid, parent int) {
				if nthread < len(plan.pids) {
					tidPid[tid] = plan.pids[nthread]
				}
				nthread++
			},
			Enter: func(s *tracer.Stop) {
				pid, ok := tidPid[s.Tid]
				if !ok {
					diverge("thread %d has no process in the trace", s.Tid)
					return
				}
				calls := plan.calls[pid]
				n := next[s.Tid]
				// Look a few calls ahead: the trace may show a call the
				// hooks do not (the execve that started the program).
				j := n
				for j < len(calls) && j < n+lookahead && calls[j].Name != s.Name {
					j++
				}
				if j >= len(calls) || calls[j].Name != s.Name {
					want := "the end of its calls"
					if n < len(calls) {
						want = fmt.Sprintf("line %d (%s)", calls[n].Index+1, calls[n].Name)
					}
					diverge("process %d called %s where the trace has %s", pid, s.Name, want)
					current[s.Tid] = nil
					return
				}
				call := calls[j]
				next[s.Tid] = j + 1
				current[s.Tid] = call
				pos(int64(call.Index + 1))
				if call == plan.killAt {
					// The call must not run: skip it, then kill. SIGKILL
					// is handled before the thread returns to user space.
					if err := s.Skip(-int64(unix.EINTR)); err != nil && performErr == nil {
						performErr = fmt.Errorf("skipping line %d before the kill: %w", call.Index+1, err)
					}
					if err := unix.Kill(s.Tgid, unix.SIGKILL); err != nil && performErr == nil {
						performErr = fmt.Errorf("killing the program at line %d: %w", call.Index+1, err)
					}
					res.killed = true
				}
			},
			Exit: func(s *tracer.Stop) {
				call := current[s.Tid]
				if call == nil {
					return
				}
				current[s.Tid] = nil
				for _, ins := range plan.after[call] {
					pos(int64(ins.index + 1))
					if err := perform(ins.call, sb.dir); err != nil && performErr == nil {
						performErr = fmt.Errorf("performing inserted line %d: %w", ins.index+1, err)
					}
				}
			},
		},
	}
	if err := c.runTraced(ctx, cmd, "replay"); err != nil {
		return nil, err
	}
	if performErr != nil {
		return nil, performErr
	}
	res.status = describeStatus(cmd.Status)
	res.output = io.tail()
	return res, nil
}

// perform does what an inserted line says, from faultline's side: the
// program's view of its files does not change, only what is durable.
//
// sync() is performed as syncfs of the sandbox: for the disk being
// recorded it is the same request, and it does not make the check wait for
// whatever else the host has dirty.
func perform(c *parser.Call, sandbox string) error {
	switch c.Name {
	case "sync":
		fd, err := unix.Open(sandbox, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the sandbox %s: %w", sandbox, err)
		}
		defer unix.Close(fd)
		if err := unix.Syncfs(fd); err != nil {
			return fmt.Errorf("syncfs %s: %w", sandbox, err)
		}
		return nil
	case "fsync", "fdatasync", "syncfs":
		if len(c.Args) != 1 || c.Args[0].Value == nil {
			return fmt.Errorf("%s: want one descriptor argument", c.Name)
		}
		n, ok := c.Args[0].Value.Head.(*parser.Int)
		if !ok || n.Decor == nil || n.Decor.Path() == "" {
			return fmt.Errorf("%s: the descriptor needs a -y path (fd</dir>)", c.Name)
		}
		dir := n.Decor.Path()
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", dir, err)
		}
		defer unix.Close(fd)
		switch c.Name {
		case "fsync":
			err = unix.Fsync(fd)
		case "fdatasync":
			err = unix.Fdatasync(fd)
		default:
			err = unix.Syncfs(fd)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.Name, dir, err)
		}
		return nil
	}
	return fmt.Errorf("faultline cannot perform an inserted %s", c.Name)
}
