package supervisor

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
	"golang.org/x/sys/unix"
)

// Lockstep: every hook below runs on the tracing thread with the thread
// that stopped held, so the engine needs no locks. Each live thread is
// mapped to a trace pid by creation order (the k-th child a process
// creates is the k-th child its trace pid creates) and walks that pid's
// events; the first call that does not match ends lockstep for all.

type thread struct {
	tid     int
	tgid    int // live thread group: the descriptor table it uses
	pid     int // trace pid; -1 when the trace has no such process
	evs     []*event
	next    int
	cur     *event          // matched at entry, waiting for its exit
	skipped bool            // cur was not executed (Stop.Skip)
	prep    []string        // what PrepareEntry changed for an edited cur
	fds     map[int64]int64 // descriptors this thread got: trace → live (fdmap.go)

	held   []unix.Signal       // arrived before the trace has them
	missed map[unix.Signal]int // the trace had them before they arrived
	// handlers are the handler runs (the calls up to rt_sigreturn) of
	// missed signals, matched when the signal does come; queue holds
	// the one being matched, ahead of evs.
	handlers map[unix.Signal][][]*event
	queue    []*event
}

func (t *thread) peek() *event {
	if len(t.queue) > 0 {
		return t.queue[0]
	}
	if t.next < len(t.evs) {
		return t.evs[t.next]
	}
	return nil
}

// advance moves past the event peek returned.
func (t *thread) advance() {
	if len(t.queue) > 0 {
		t.queue = t.queue[1:]
		return
	}
	t.next++
}

type engine struct {
	r  *Replay
	sc *script
	// syncDir is the sandbox as the program sees it; an inserted sync()
	// is performed as a syncfs of it (see performCall).
	syncDir string

	tids     map[int]*thread
	liveKids map[int]int
	fds      fdMaps

	diverged   bool
	div        *Divergence
	divTid     int
	divPending bool // Actual still to be completed with the call's result
	world      *WorldError

	anomalies  int // anomaly events performed
	killed     bool
	injections []Injection
	adjusted   []Injection // unedited lines patched to agree
	notes      []string

	replayLine    int
	divReplayLine int
	after         []string
	afterTotal    int
	stderrAfter   bool
}

func newEngine(r *Replay, sc *script) *engine {
	return &engine{r: r, sc: sc, tids: map[int]*thread{}, liveKids: map[int]int{}, fds: fdMaps{}}
}

func (e *engine) logf(format string, args ...any) {
	if e.r.Log != nil {
		fmt.Fprintf(e.r.Log, "faultline: "+format+"\n", args...)
	}
}

func (e *engine) position(line int) {
	if e.r.OnPosition != nil {
		e.r.OnPosition(int64(line))
	}
}

// newThread maps a new live thread to its trace pid.
func (e *engine) newThread(tid, parent int) {
	if e.tids[tid] != nil {
		return
	}
	pid := -1
	if parent == 0 {
		pid = e.sc.root
	} else if pt := e.tids[parent]; pt != nil && pt.pid >= 0 {
		k := e.liveKids[parent]
		e.liveKids[parent]++
		if kids := e.sc.children[pt.pid]; k < len(kids) {
			pid = kids[k]
		}
	}
	tgid, _ := procTgid(tid)
	if pt := e.tids[parent]; pt != nil && tgid == tid {
		e.fds.inherit(tgid, pt.tgid) // a new process: a copy of the table
	}
	th := &thread{tid: tid, tgid: tgid, pid: pid}
	if pt := e.tids[parent]; pt != nil && tgid == tid && len(pt.fds) > 0 {
		th.fds = make(map[int64]int64, len(pt.fds))
		for k, v := range pt.fds {
			th.fds[k] = v
		}
	}
	if pid >= 0 {
		th.evs = e.sc.threads[pid]
	}
	e.tids[tid] = th
}

// thread finds a live thread's state; one seen before its creator's fork
// event is mapped from /proc.
func (e *engine) thread(tid int) *thread {
	if th := e.tids[tid]; th != nil {
		return th
	}
	tgid, parent := procTgid(tid)
	if tgid != tid {
		parent = tgid
	}
	if parent == 0 {
		parent = -1 // not the root: that one is always known
	}
	e.newThread(tid, parent)
	return e.tids[tid]
}

func (e *engine) enter(s *tracer.Stop) {
	if e.diverged {
		return
	}
	th := e.thread(s.Tid)
	if s.Call == nil {
		return // not traced by the header's filter
	}
	if th.pid < 0 {
		e.diverge(th, nil, entryText(s.Call), "a process the trace does not have")
		return
	}
	e.performInserted(s, th)
	if e.diverged || e.killed {
		return
	}
	// Futex calls are the threads' scheduling, not the program's
	// decisions: how many a join or a lock takes differs from run to
	// run. They run free and the trace's are passed over.
	if freeCalls[s.Call.Name] {
		return
	}
	for ev := th.peek(); ev != nil && ev.call != nil && freeCalls[ev.call.Name] && !ev.edited && !ev.inserted; ev = th.peek() {
		th.advance()
	}
	// A signal the trace has before this call has not come yet: it
	// will be delivered when it does, and its handler's calls are
	// matched then.
	for ev := th.peek(); ev != nil && ev.sig != ""; ev = th.peek() {
		th.deferSignal(unix.SignalNum(ev.sig))
	}
	ev := th.peek()
	switch {
	case ev == nil:
		e.diverge(th, nil, entryText(s.Call), "the trace has no more calls for this process")
		return
	case ev.exit != nil:
		e.diverge(th, ev, entryText(s.Call), "the trace has the process end here")
		return
	}
	if ok, why := matchCall(ev.call, s.Call, func(fd int64) int64 { return e.fds.live(th, fd) }); !ok {
		e.diverge(th, ev, entryText(s.Call), why)
		return
	}
	th.advance()
	th.cur = ev
	th.skipped = false
	e.position(ev.line)
	res := ev.call.Result
	switch {
	case res != nil && res.Failed() && executeFailure(res.Outcome.Errno):
		// ERESTART* and EINPROGRESS are not a call's final word: the
		// kernel restarts it, or the operation goes on; run it.
	case res != nil && res.Failed():
		no, ok := errnoNumber(res.Outcome.Errno)
		if !ok {
			e.notes = append(e.notes, fmt.Sprintf("line %d: unknown errno %s: the call was executed", ev.line, res.Outcome.Errno))
			break
		}
		if err := s.Skip(-int64(no)); err != nil {
			e.notes = append(e.notes, fmt.Sprintf("line %d: %v", ev.line, err))
			break
		}
		th.skipped = true
		switch {
		case ev.edited:
			e.injected(ev, "fail", []string{"not executed; returns -1 " + res.Outcome.Errno})
		case faultErrno[res.Outcome.Errno]:
			// No sandbox fails this way on its own: an unmarked line
			// with this error is a hand edit.
			e.anomalies++
			e.injections = append(e.injections, Injection{Line: ev.line, Kind: "hand-edit", Call: ev.text(),
				Changes: []string{"not executed; returns -1 " + res.Outcome.Errno}})
			e.logf("injected at line %d (hand-edit): %s", ev.line, ev.text())
		}
	case ev.notPerformed:
		v, _ := res.Int()
		if err := s.Skip(v); err != nil {
			e.notes = append(e.notes, fmt.Sprintf("line %d: %v", ev.line, err))
			break
		}
		th.skipped = true
		e.injected(ev, "not-performed", []string{fmt.Sprintf("not executed; returns %d", v)})
	default:
		if ch, err := s.PrepareEntry(ev.wantCall()); err != nil {
			e.notes = append(e.notes, fmt.Sprintf("line %d: %v", ev.line, err))
		} else if len(ch) > 0 && ev.edited {
			th.prep = ch
		}
	}
}

// freeCalls run outside lockstep (see enter).
var freeCalls = map[string]bool{"futex": true, "sched_yield": true}

// faultErrno are the errors a fresh sandbox never returns by itself:
// the device, the disk, the network or the kernel failed. Errors a world
// gives (ENOENT, EEXIST, EACCES for --user, EAGAIN) are not here.
var faultErrno = map[string]bool{
	"EIO": true, "ENOSPC": true, "EDQUOT": true, "EFBIG": true, "EXDEV": true, "EROFS": true,
	"EMFILE": true, "ENFILE": true, "ENOMEM": true, "EBUSY": true, "ELOOP": true,
	"ECONNRESET": true, "ETIMEDOUT": true, "ECONNREFUSED": true, "EHOSTUNREACH": true, "ENETUNREACH": true,
}

func executeFailure(errno string) bool {
	return strings.HasPrefix(errno, "ERESTART") || errno == "EINPROGRESS"
}

func (e *engine) exit(s *tracer.Stop) {
	th := e.tids[s.Tid]
	if th == nil || th.cur == nil {
		return
	}
	ev := th.cur
	th.cur = nil
	prep := th.prep
	th.prep = nil
	if !th.skipped {
		e.fds.observe(th, ev.call.Name, ev.call, s.Regs.Ret())
	}
	if !th.skipped && ev.call.Result != nil && !ev.call.Result.Unknown && !noPatch[ev.call.Name] {
		ret := s.Regs.Ret()
		liveFailed := failedRet(ret) && !ev.call.Result.Failed() && !volatileErrno(ret)
		if liveFailed && !ev.edited && !e.diverged {
			// The world refused what it granted at recording.
			e.diverge(th, ev, ev.call.Name+"(...) = "+errnoText(ret), "the call failed where the line succeeds")
			return
		}
		ch, err := s.PatchWith(ev.wantCall(), e.r.Patch)
		if err != nil {
			if liveFailed && !e.diverged {
				// An edit of a call the world did not let happen.
				e.diverge(th, ev, ev.call.Name+"(...) = "+errnoText(ret), "the call failed where the line succeeds, so the edit cannot be applied")
				return
			}
			e.notes = append(e.notes, fmt.Sprintf("line %d: %v", ev.line, err))
		}
		ch = append(prep, ch...)
		switch {
		case ev.edited:
			e.injected(ev, "result", ch)
		case significant(ch) && !e.fds.statsStdio(th.tgid, ev.call):
			// An unmarked line the world had to be bent to: a hand edit
			// (or a world that differs in what the program can see, which
			// the trace now decides).
			e.anomalies++
			e.injections = append(e.injections, Injection{Line: ev.line, Kind: "hand-edit", Call: ev.text(), Changes: ch})
			e.logf("injected at line %d (hand-edit): %s%s", ev.line, ev.text(), changeSuffix(ch))
		case len(ch) > 0:
			e.adjusted = append(e.adjusted, Injection{Line: ev.line, Kind: "agree", Call: ev.text(), Changes: ch})
		}
	}
	th.skipped = false
	if e.r.AfterCall != nil {
		ls := ev.call.Lines
		e.r.AfterCall(ls[len(ls)-1], int64(ev.line))
	}
	if !e.diverged {
		e.performInserted(s, th)
		e.raiseHeld(th)
	}
}

// Signals from outside the thread (a child's SIGCHLD, a timer) arrive
// when the kernel gets to them, not where the trace has them; a handler
// run at another point makes another sequence of calls. So in lockstep
// such a signal is held back when it arrives early and raised again
// right after the call the trace has it after: it is delivered on that
// call's return to user space, as in the recording.

// synchronous signals are the thread's own doing, delivered where it is.
var synchronous = map[unix.Signal]bool{
	unix.SIGSEGV: true, unix.SIGBUS: true, unix.SIGILL: true, unix.SIGFPE: true,
	unix.SIGTRAP: true, unix.SIGSYS: true, unix.SIGPIPE: true, unix.SIGABRT: true,
	unix.SIGKILL: true, unix.SIGSTOP: true, unix.SIGXFSZ: true, unix.SIGXCPU: true,
}

func (e *engine) signal(s *tracer.Stop, sig unix.Signal) unix.Signal {
	th := e.tids[s.Tid]
	if e.diverged || th == nil || th.pid < 0 {
		return sig
	}
	if ev := th.peek(); ev != nil && ev.sig != "" && unix.SignalNum(ev.sig) == sig {
		th.advance()
		return sig
	}
	if th.missed[sig] > 0 {
		th.missed[sig]--
		if hs := th.handlers[sig]; len(hs) > 0 {
			th.queue = append(append([]*event(nil), hs[0]...), th.queue...)
			th.handlers[sig] = hs[1:]
		}
		return sig
	}
	if synchronous[sig] {
		return sig
	}
	th.held = append(th.held, sig)
	return 0
}

// deferSignal moves past a signal the trace has next that has not
// arrived, and past its handler's run when the thread catches it: the
// events up to its rt_sigreturn. Two pending instances of one signal
// merge into one, so a deferred handler run may never be matched.
func (th *thread) deferSignal(sig unix.Signal) {
	if th.missed == nil {
		th.missed = map[unix.Signal]int{}
		th.handlers = map[unix.Signal][][]*event{}
	}
	th.missed[sig]++
	th.advance()
	if len(th.queue) > 0 || !catches(th.tid, sig) {
		return
	}
	for i := th.next; i < len(th.evs); i++ {
		ev := th.evs[i]
		if ev.sig != "" || ev.exit != nil || ev.inserted {
			return // not a plain handler run: leave the trace as it is
		}
		if ev.call != nil && (ev.call.Name == "rt_sigreturn" || ev.call.Name == "sigreturn") {
			th.handlers[sig] = append(th.handlers[sig], th.evs[th.next:i+1])
			th.next = i + 1
			return
		}
	}
}

// raiseHeld raises the held signals the trace has next for th.
func (e *engine) raiseHeld(th *thread) {
	for i := th.next; len(th.queue) == 0 && i < len(th.evs) && th.evs[i].sig != ""; i++ {
		want := unix.SignalNum(th.evs[i].sig)
		for j, h := range th.held {
			if h == want {
				th.held = append(th.held[:j], th.held[j+1:]...)
				unix.Tgkill(th.tgid, th.tid, want)
				break
			}
		}
	}
}

// noPatch are calls whose "result" is not theirs to agree on:
// rt_sigreturn returns the interrupted call's value.
var noPatch = map[string]bool{"rt_sigreturn": true, "sigreturn": true, "execve": true, "execveat": true, "restart_syscall": true}

// significant reports whether a patch changed what a program acts on
// (type, mode, size, owner, links, data, entries, targets, results)
// rather than what differs on every fresh file system (inode and device
// numbers, timestamps, block counts).
func significant(changes []string) bool {
	for _, c := range changes {
		field, _, _ := strings.Cut(c, " ")
		switch field {
		case "st_mode", "stx_mode", "st_size", "stx_size", "st_rdev", "stx_rdev_major", "stx_rdev_minor",
			"result", "buf", "iov", "entries", "target":
			return true
		}
	}
	return false
}

func failedRet(r int64) bool { return r < 0 && r >= -4095 }

// volatileErrno are failures that depend on timing, not on the world.
func volatileErrno(r int64) bool {
	switch unix.Errno(-r) {
	case unix.EAGAIN, unix.EINTR, unix.ETIMEDOUT, unix.ERESTART:
		return true
	}
	return -r >= 512 && -r <= 516 // ERESTARTSYS and friends
}

func errnoText(r int64) string {
	if n := unix.ErrnoName(unix.Errno(-r)); n != "" {
		return "-1 " + n + " (" + unix.Errno(-r).Error() + ")"
	}
	return strconv.FormatInt(r, 10)
}

var errnoByName = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for i := 1; i < 4096; i++ {
		if n := unix.ErrnoName(unix.Errno(i)); n != "" {
			if _, dup := m[n]; !dup {
				m[n] = i
			}
		}
	}
	// Names strace prints that the table spells another way.
	for n, v := range map[string]int{"EWOULDBLOCK": int(unix.EAGAIN), "EDEADLOCK": int(unix.EDEADLK), "ENOTSUP": int(unix.EOPNOTSUPP)} {
		if _, ok := m[n]; !ok {
			m[n] = v
		}
	}
	return m
})

func errnoNumber(name string) (int, bool) {
	n, ok := errnoByName()[name]
	return n, ok
}

// diverge ends lockstep at th's call (ev is the line it should have
// made, nil when the trace has none).
func (e *engine) diverge(th *thread, ev *event, actual, why string) {
	e.diverged = true
	d := &Divergence{Pid: th.pid, Tid: th.tid, Actual: actual, Reason: why}
	if ev != nil {
		d.Line = ev.line
		d.Expected = ev.text()
	} else {
		d.Line = e.lastLine(th)
		d.Expected = "(no more calls)"
	}
	e.div = d
	e.divTid = th.tid
	e.divPending = true
	e.divReplayLine = e.replayLine
	e.logf("diverged at line %d: expected %s, program did %s (%s)", d.Line, d.Expected, d.Actual, why)
	if e.anomalies == 0 {
		e.world = &WorldError{Line: d.Line, Expected: d.Expected, Actual: d.Actual, Reason: why}
	}
	// Calls matched at entry still finish as the trace says.
}

func (e *engine) lastLine(th *thread) int {
	if th.next > 0 && th.next <= len(th.evs) {
		return th.evs[th.next-1].line
	}
	return 0
}

func (e *engine) injected(ev *event, kind string, changes []string) {
	if ev.injection() {
		e.anomalies++
	}
	in := Injection{Line: ev.line, Kind: kind, Call: ev.text(), Changes: changes}
	e.injections = append(e.injections, in)
	e.logf("injected at line %d (%s): %s%s", ev.line, kind, in.Call, changeSuffix(changes))
}

func changeSuffix(ch []string) string {
	if len(ch) == 0 {
		return ""
	}
	return ": " + strings.Join(ch, "; ")
}

// completed sees each line of the replayed trace as it is written.
func (e *engine) completed(tid int, l *parser.Line, n int) {
	e.replayLine = n
	if !e.diverged {
		return
	}
	text := l.String()
	if tid == e.divTid && e.divPending {
		e.divPending = false
		e.div.Actual = rePidPrefix().ReplaceAllString(text, "")
		if e.world != nil {
			e.world.Actual = e.div.Actual
		}
	}
	e.afterTotal++
	if len(e.after) < maxAfter {
		e.after = append(e.after, text)
	}
	if c, ok := l.Body.(*parser.Call); ok && writesStderr(c) {
		e.stderrAfter = true
	}
	if e.r.AfterCall != nil && e.div != nil {
		e.r.AfterCall(l, int64(e.div.Line))
	}
}

const maxAfter = 500

func isWrite(name string) bool {
	switch name {
	case "write", "writev", "pwrite64":
		return true
	}
	return false
}

func writesStderr(c *parser.Call) bool {
	if !isWrite(c.Name) || len(c.Args) == 0 || c.Args[0].Value == nil {
		return false
	}
	i, ok := c.Args[0].Value.Head.(*parser.Int)
	if !ok {
		return false
	}
	n, ok := i.Int64()
	return ok && n == 2
}

var rePidPrefix = lazyRegexp(`^(\[pid\s+\d+\]|\d+)\s+`)
