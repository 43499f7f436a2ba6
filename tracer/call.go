package tracer

import (
	"fmt"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// scall is the call a thread is in, between its entry and exit stops.
type scall struct {
	nr    int
	se    *sysent
	d     dec
	entry []*parser.Arg // the half printed at entry
	split int           // first argument decoded at exit
	inout *parser.Arg   // the entry argument whose "=> out" comes at exit
	// outOnly: the argument at split is in/out but showed nothing at
	// entry (ioctl TCGETS, fcntl F_GETLK), so it prints whole at exit.
	outOnly bool
	hidden  bool // filtered out of the trace

	skip     bool
	skipRet  int64
	injected bool
	// syncFD is the descriptor of Cmd.SyncDir a sync() runs on as
	// syncfs, closed at its exit; 0 when there is none.
	syncFD int
}

func (s *scall) name() string { return s.se.name }

// lateComma reports whether the exit half starts with its own separator.
func (s *scall) lateComma() bool {
	return s.inout == nil && s.split < len(s.se.args) && s.se.args[s.split].lateComma
}

// cloneThread reports whether the call creates a thread of the caller.
func (s *scall) cloneThread() bool {
	switch s.se.name {
	case "clone":
		return s.d.args[0]&unix.CLONE_THREAD != 0
	case "clone3":
		return s.d.saved[0]&unix.CLONE_THREAD != 0
	}
	return false
}

// enter records and decodes the entry half of a call and opens its line.
func (t *tracer) enter(p *tracee, r *Regs) {
	sc := &scall{nr: r.Nr(), se: lookup(r.Nr())}
	sc.d = dec{t: t, pid: p.tid, nr: sc.nr, name: sc.se.name, args: r.Args(), sp: r.SP(), retFn: sc.se.ret}
	sc.hidden = t.c.Filter != nil && !t.c.Filter.Has(sc.nr)
	p.sc = sc
	show := t.decode && !sc.hidden
	if show {
		sc.decodeEntry()
	}
	if t.c.Hooks.Enter != nil {
		s := &Stop{Tid: p.tid, Tgid: p.tgid, Nr: sc.nr, Name: sc.name(), Regs: *r, t: t, p: p}
		if show {
			s.Call = &parser.Call{Name: sc.name(), Args: sc.entry}
		}
		t.c.Hooks.Enter(s)
	}
	if t.c.SyncDir != "" && sc.nr == unix.SYS_SYNC && !sc.skip {
		t.syncAsSyncfs(p, r)
	}
	if show {
		t.closeOpen()
		t.cur = p
	}
}

// exit decodes the rest of a call and prints it: as one line when its
// entry half is still open, else as the "<... resumed>" half.
func (t *tracer) exit(p *tracee) {
	sc := p.sc
	if sc == nil {
		return
	}
	p.sc = nil
	if sc.syncFD > 0 {
		t.closeSyncFD(p, sc.syncFD)
	}
	needRegs := sc.skip || t.c.Hooks.Exit != nil || (t.decode && !sc.hidden)
	if !needRegs {
		return
	}
	var r Regs
	if err := ptraceGetRegs(p.tid, &r); err != nil {
		return
	}
	if sc.skip {
		r.SetRet(sc.skipRet)
		unix.PtraceSetRegs(p.tid, &r.PtraceRegs)
		sc.injected = true
	}
	show := t.decode && !sc.hidden
	if t.c.Hooks.Exit != nil {
		s := &Stop{Tid: p.tid, Tgid: p.tgid, Nr: sc.nr, Name: sc.name(), Regs: r, Exiting: true, t: t, p: p}
		t.c.Hooks.Exit(s)
		r = s.Regs
	}
	if !show {
		return
	}
	sc.d.exiting = true
	sc.d.ret = r.Ret()
	out, args := sc.decodeExit()
	res := sc.d.result()
	if sc.injected {
		res.Outcome.Notes = append(res.Outcome.Notes, "(INJECTED)")
	}
	if t.cur == p {
		all := append(sc.entry[:len(sc.entry):len(sc.entry)], args...)
		t.cur = nil
		t.write(t.line(p, &parser.Call{Name: sc.name(), Args: all, Result: res}))
		return
	}
	rs := &parser.Resumed{Name: parser.ResumedName(sc.name()), Out: out, Comma: (out != nil || sc.lateComma()) && len(args) > 0, Args: args, Result: res}
	t.write(t.line(p, rs))
}

// unknownResult ends a call that will never return ("= ?"), as strace
// does when a thread dies inside one.
func (t *tracer) unknownResult(p *tracee) {
	sc := p.sc
	p.sc = nil
	p.inSyscall = false
	if !t.decode || sc.hidden {
		return
	}
	var pd parser.Pending
	if sc.split < len(sc.se.args) {
		pd = pending(sc)
	}
	if t.cur == p {
		t.cur = nil
		t.write(t.line(p, &parser.Call{Name: sc.name(), Args: sc.entry, Pending: pd, Result: parser.Unknown()}))
		return
	}
	t.closeOpen()
	if pd != "" {
		pd = " <unfinished ...>"
	}
	t.write(t.line(p, &parser.Resumed{Name: parser.ResumedName(sc.name()), Pending: pd, Result: parser.Unknown()}))
}

// pending is the "<unfinished ...>" marker of a call's entry half: after
// a comma when arguments are still to come, as strace prints "read(3, ".
func pending(sc *scall) parser.Pending {
	if len(sc.entry) > 0 && sc.inout == nil && sc.split < len(sc.se.args) && !sc.se.args[sc.split].lateComma {
		return ", <unfinished ...>"
	}
	return " <unfinished ...>"
}

// closeOpen ends the open entry half with "<unfinished ...>" because
// another line must be printed first.
func (t *tracer) closeOpen() {
	p := t.cur
	if p == nil {
		return
	}
	t.cur = nil
	if p.sc == nil {
		return
	}
	sc := p.sc
	t.write(t.line(p, &parser.Call{Name: sc.name(), Args: sc.entry, Pending: pending(sc)}))
}

// emit prints a line that is not a call's half (signal, exit).
func (t *tracer) emit(p *tracee, b parser.Body) {
	t.closeOpen()
	t.write(t.line(p, b))
}

func (t *tracer) line(p *tracee, b parser.Body) *parser.Line {
	pid := 0
	if t.prefix {
		pid = p.tid
	}
	return parser.NewLine(pid, b)
}

func (t *tracer) write(l *parser.Line) {
	if t.w != nil {
		parser.Fprint(t.w, l)
	}
}

// String is for debugging.
func (s *scall) String() string { return fmt.Sprintf("%s#%d", s.name(), s.nr) }
