package supervisor

import (
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
)

// Descriptor numbers are not identity: threads that open files at the
// same time get them in another order on every run, and the recording's
// numbers then name other files in the live run. Lockstep keeps, per
// live descriptor table, the live number for each number the trace
// uses, learnt from every call that returns a new descriptor, and
// compares descriptor arguments through it. The decorations -y prints
// are not compared: they say where the recording's stdio went, which
// depends on how faultline was started, not on the program.

// fdTable is one live descriptor table (threads share one; a forked
// process starts with a copy): the live number of each trace number
// that differs, and which of 0, 1, 2 still are the stdio faultline was
// started with. What a program sees of those (a tty, /dev/null, a file)
// depends on how faultline was run, so a stat of one that the replay
// bends to the recording is an adjustment, not a hand edit.
type fdTable struct {
	live  map[int64]int64
	stdio map[int64]bool
}

// Threads of one process share the table but the trace's numbers are
// reused in an order the live run need not keep: the trace's t1 closes
// 4 and t3 opens 4, where live t3 opens first and gets 5. So each thread
// also remembers what it opened itself, and that wins.

// fdMaps holds the tables by live thread group.
type fdMaps map[int]*fdTable

func (m fdMaps) table(tgid int) *fdTable {
	t := m[tgid]
	if t == nil {
		t = &fdTable{live: map[int64]int64{}, stdio: map[int64]bool{0: true, 1: true, 2: true}}
		m[tgid] = t
	}
	return t
}

func (m fdMaps) live(th *thread, fd int64) int64 {
	if v, ok := th.fds[fd]; ok {
		return v
	}
	if v, ok := m.table(th.tgid).live[fd]; ok {
		return v
	}
	return fd
}

// inheritedStdio reports whether fd is still one of faultline's stdio.
func (m fdMaps) inheritedStdio(tgid int, fd int64) bool { return m.table(tgid).stdio[fd] }

func (m fdMaps) learn(th *thread, traceFD, liveFD int64) {
	if th.fds == nil {
		th.fds = map[int64]int64{}
	}
	th.fds[traceFD] = liveFD
	t := m.table(th.tgid)
	delete(t.stdio, traceFD)
	if traceFD == liveFD {
		delete(t.live, traceFD)
		return
	}
	t.live[traceFD] = liveFD
}

func (m fdMaps) forget(th *thread, fd int64) {
	delete(th.fds, fd)
	t := m.table(th.tgid)
	delete(t.live, fd)
	delete(t.stdio, fd)
}

func (m fdMaps) inherit(child, parent int) {
	p := m.table(parent)
	t := &fdTable{live: make(map[int64]int64, len(p.live)), stdio: make(map[int64]bool, len(p.stdio))}
	for k, v := range p.live {
		t.live[k] = v
	}
	for k, v := range p.stdio {
		t.stdio[k] = v
	}
	m[child] = t
}

// observe updates the tables at the exit of a call matched to ev.
func (m fdMaps) observe(th *thread, name string, ev *parser.Syscall, ret int64) {
	if ev.Result == nil || ev.Result.Failed() || failedRet(ret) {
		return
	}
	switch {
	case tracer.ReturnsFD(name):
		if want, ok := ev.Result.Int(); ok && want >= 0 {
			m.learn(th, want, ret)
		}
	case name == "close":
		if fd, ok := intArg(ev.Args, 0); ok {
			m.forget(th, fd)
		}
	}
}

// statsStdio reports whether ev is a stat of one of faultline's stdio.
func (m fdMaps) statsStdio(tgid int, ev *parser.Syscall) bool {
	switch ev.Name {
	case "fstat", "newfstatat", "statx":
	default:
		return false
	}
	fd, ok := intArg(ev.Args, 0)
	if !ok {
		return false
	}
	if ev.Name != "fstat" {
		// newfstatat(1, "", ..., AT_EMPTY_PATH): the descriptor itself.
		if len(ev.Args) < 2 || ev.Args[1] == nil || ev.Args[1].Value == nil {
			return false
		}
		if s, ok := ev.Args[1].Value.Head.(*parser.Str); !ok || s.Quoted != `""` {
			return false
		}
	}
	return m.inheritedStdio(tgid, fd)
}

// intArg is argument i as a number.
func intArg(args []*parser.Arg, i int) (int64, bool) {
	if i >= len(args) || args[i] == nil || args[i].Value == nil {
		return 0, false
	}
	n, ok := args[i].Value.Head.(*parser.Int)
	if !ok {
		return 0, false
	}
	return n.Int64()
}
