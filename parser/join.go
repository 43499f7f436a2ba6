package parser

import (
	"fmt"
	"sort"
)

// Syscall is one logical system call: a complete line, or the two halves
// of a call that another thread's line split ("<unfinished ...>" then
// "<... NAME resumed>"), joined. The halves keep their own text: Args and
// Result point into the source lines' nodes, so editing them edits those
// lines.
type Syscall struct {
	Pid    int
	Name   string
	Args   []*Arg
	Result *Result // nil when the call never returned (the trace ended or the process died)
	Lines  []*Line // the one or two lines the call was printed on
}

// Joiner pairs the halves of split calls, one pending call per process: a
// thread has at most one call in flight, so its state is bounded by the
// number of threads, not by the trace's length.
type Joiner struct {
	pending map[int]*Line
}

// Add takes the next line of a trace and returns the calls it completes:
// none while a call is pending, one for a complete call or a resumed half.
// A resumed half without its start, or a second start while one is
// pending, is an error naming the line.
func (j *Joiner) Add(l *Line) (*Syscall, error) {
	if j.pending == nil {
		j.pending = make(map[int]*Line)
	}
	pid := l.Prefix.Pid.N
	switch b := l.Body.(type) {
	case *Call:
		if prev, ok := j.pending[pid]; ok && b.Pending.Unfinished() {
			return nil, fmt.Errorf("%s: pid %d starts %s while %s (line %d) is unfinished",
				posString(l.Pos), pid, b.Name, prev.Body.(*Call).Name, prev.Pos.Line)
		}
		if b.Pending.Unfinished() {
			j.pending[pid] = l
			return nil, nil
		}
		return &Syscall{Pid: pid, Name: b.Name, Args: b.Args, Result: b.Result, Lines: []*Line{l}}, nil
	case *Resumed:
		start, ok := j.pending[pid]
		if !ok {
			return nil, fmt.Errorf("%s: %s resumed in pid %d, which has no unfinished call", posString(l.Pos), b.Name, pid)
		}
		first := start.Body.(*Call)
		if first.Name != string(b.Name) {
			return nil, fmt.Errorf("%s: %s resumed in pid %d, but the unfinished call (line %d) is %s",
				posString(l.Pos), b.Name, pid, start.Pos.Line, first.Name)
		}
		if b.Pending.Unfinished() {
			return nil, nil // still in flight: strace split it again
		}
		delete(j.pending, pid)
		return &Syscall{Pid: pid, Name: first.Name, Args: joinArgs(first.Args, b), Result: b.Result,
			Lines: []*Line{start, l}}, nil
	}
	return nil, nil
}

// joinArgs appends the resumed half's arguments; an out-value at the start
// of the resumed half ("=> {parent_tid=...}") belongs to the last argument
// of the first half, which is copied so the source line is not changed.
func joinArgs(first []*Arg, r *Resumed) []*Arg {
	args := make([]*Arg, 0, len(first)+len(r.Args))
	args = append(args, first...)
	if r.Out != nil && len(args) > 0 {
		last := *args[len(args)-1]
		last.Out = r.Out
		args[len(args)-1] = &last
	}
	return append(args, r.Args...)
}

// Unfinished returns the calls still pending, in pid order: at the end of
// a trace, the calls that never returned.
func (j *Joiner) Unfinished() []*Syscall {
	pids := make([]int, 0, len(j.pending))
	for pid := range j.pending {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	out := make([]*Syscall, 0, len(pids))
	for _, pid := range pids {
		l := j.pending[pid]
		c := l.Body.(*Call)
		out = append(out, &Syscall{Pid: pid, Name: c.Name, Args: c.Args, Lines: []*Line{l}})
	}
	return out
}

// Forget drops a pending call, as when its process is killed while the
// call is in flight ("+++ killed by SIGKILL +++" after "<unfinished ...>").
func (j *Joiner) Forget(pid int) { delete(j.pending, pid) }
