package supervisor

import (
	"fmt"

	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
	"golang.org/x/sys/unix"
)

// Inserted lines are calls and events the program did not make: the
// supervisor performs them in the program's context (Stop.Inject) at the
// point the trace has them, right after the thread's previous call.

// performInserted performs the inserted events that come next in th.
func (e *engine) performInserted(s *tracer.Stop, th *thread) {
	for !e.diverged && !e.killed {
		ev := th.peek()
		if ev == nil || !ev.inserted || ev.sig != "" {
			return
		}
		th.advance()
		e.position(ev.line)
		if ev.exit != nil {
			e.performKill(s, ev)
			return
		}
		ch, err := e.performCall(s, ev.call)
		if err != nil {
			e.notes = append(e.notes, fmt.Sprintf("line %d: inserted %s not performed: %v", ev.line, ev.call.Name, err))
			e.logf("line %d: inserted %s not performed: %v", ev.line, ev.call.Name, err)
			continue
		}
		e.injected(ev, "inserted", ch)
		if e.r.AfterCall != nil {
			ls := ev.call.Lines
			e.r.AfterCall(ls[len(ls)-1], int64(ev.line))
		}
	}
}

// performKill kills the thread's process where the trace has it killed.
func (e *engine) performKill(s *tracer.Stop, ev *event) {
	sig := unix.SIGKILL
	if n := unix.SignalNum(ev.exit.KilledBy); n != 0 {
		sig = n
	}
	if ev.exit.KilledBy == "" {
		e.notes = append(e.notes, fmt.Sprintf("line %d: an inserted exit (%s) cannot be performed; only kills can", ev.line, ev.text()))
		return
	}
	if err := unix.Kill(s.Tgid, sig); err != nil {
		e.notes = append(e.notes, fmt.Sprintf("line %d: kill %d: %v", ev.line, s.Tgid, err))
		return
	}
	e.killed = true
	e.injected(ev, "kill", []string{fmt.Sprintf("process %d killed with %s", s.Tgid, unix.SignalName(sig))})
}

// performCall runs an inserted sync, syncfs, fsync or fdatasync.
func (e *engine) performCall(s *tracer.Stop, c *parser.Syscall) ([]string, error) {
	switch c.Name {
	case "sync":
		if e.syncDir == "" {
			r, err := s.Inject(unix.SYS_SYNC)
			return result("sync()", r), err
		}
		// In a sandbox only its own file system matters, and a global
		// sync would also flush the disks of checks running beside this
		// one, at a moment their traces do not show.
		return e.onDir(s, unix.SYS_SYNCFS, "sync() as syncfs of the sandbox", e.syncDir)
	case "syncfs", "fsync", "fdatasync":
	default:
		return nil, fmt.Errorf("faultline performs inserted sync, syncfs, fsync, fdatasync and kills only")
	}
	nr := map[string]int{"syncfs": unix.SYS_SYNCFS, "fsync": unix.SYS_FSYNC, "fdatasync": unix.SYS_FDATASYNC}[c.Name]
	if len(c.Args) == 0 || c.Args[0].Value == nil {
		return nil, fmt.Errorf("no descriptor")
	}
	fdv, ok := c.Args[0].Value.Head.(*parser.Int)
	if !ok {
		return nil, fmt.Errorf("descriptor %s is not a number", parser.Format(c.Args[0]))
	}
	fd, ok := fdv.Int64()
	if !ok {
		return nil, fmt.Errorf("descriptor %s is not a number", fdv.Text)
	}
	if fd >= 0 {
		r, err := s.Inject(nr, uint64(fd))
		return result(fmt.Sprintf("%s(%d)", c.Name, fd), r), err
	}
	// fd -1: a directory the program never opened, named by the -y
	// decoration (a commit point): open it, sync it, close it.
	dir := ""
	if fdv.Decor != nil {
		dir = fdv.Decor.Path()
	}
	if dir == "" {
		return nil, fmt.Errorf("fd %d without a directory path in <...>", fd)
	}
	return e.onDir(s, nr, c.Name+" of directory", dir)
}

// onDir opens dir in the program's context, performs call nr on it and
// closes it again.
func (e *engine) onDir(s *tracer.Stop, nr int, what, dir string) ([]string, error) {
	dfd, err := s.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	r, err := s.Inject(nr, uint64(dfd))
	if _, cerr := s.Inject(unix.SYS_CLOSE, uint64(dfd)); cerr != nil && err == nil {
		err = cerr
	}
	return result(what+" "+dir, r), err
}

func result(what string, r int64) []string {
	if failedRet(r) {
		return []string{what + " = " + errnoText(r)}
	}
	return []string{fmt.Sprintf("%s = %d", what, r)}
}
