package tracer

import (
	"fmt"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Hooks let a supervisor take part in the trace. Every hook runs on the
// tracing thread while the thread that stopped is held in its ptrace stop,
// so a hook may read and change its registers and memory through the Stop
// and must not block on anything the tracee does. Nil hooks are skipped.
type Hooks struct {
	// Enter is called at each traced syscall entry, after its entry
	// arguments were decoded (so the trace shows what the program asked).
	Enter func(s *Stop)
	// Exit is called at each traced syscall exit, before the result and
	// out-arguments are decoded (so the trace shows what the program got).
	Exit func(s *Stop)
	// Signal is called at a signal-delivery stop; it returns the signal to
	// deliver (sig unchanged, another, or 0 to suppress it).
	Signal func(s *Stop, sig unix.Signal) unix.Signal
	// NewThread is called when a traced thread or process starts (parent
	// is 0 for the first one).
	NewThread func(tid, parent int)
	// Exited is called when a traced thread is gone.
	Exited func(tid int, status unix.WaitStatus)
}

// Stop is one thread held in a ptrace stop, as a hook sees it.
type Stop struct {
	Tid  int    // the thread
	Tgid int    // its process
	Nr   int    // the syscall number as the program made it
	Name string // its strace name
	// Regs are the registers read at this stop. Change them and call
	// SetRegs to write them back.
	Regs Regs
	// Exiting is false at entry, true at exit.
	Exiting bool
	// Call is the decoded entry half at entry (nil without an Output, and
	// at exit, where decoding waits for the hook's changes).
	Call *parser.Call

	t *tracer
	p *tracee
}

// SetRegs writes Regs back to the thread.
func (s *Stop) SetRegs() error {
	if err := unix.PtraceSetRegs(s.Tid, &s.Regs.PtraceRegs); err != nil {
		return fmt.Errorf("set registers of %d: %w", s.Tid, err)
	}
	return nil
}

// Skip, at entry, keeps the kernel from running the call; at exit its
// result will be ret (a negative errno for a failure), marked INJECTED.
func (s *Stop) Skip(ret int64) error {
	if s.Exiting {
		return fmt.Errorf("skip %s in %d: the call already ran", s.Name, s.Tid)
	}
	s.Regs.SetNr(-1)
	if err := s.SetRegs(); err != nil {
		return err
	}
	s.p.sc.skip = true
	s.p.sc.skipRet = ret
	return nil
}

// SetResult, at exit, replaces the call's result (a negative errno for a
// failure); the trace marks it INJECTED.
func (s *Stop) SetResult(ret int64) error {
	if !s.Exiting {
		return fmt.Errorf("set result of %s in %d: the call has not run", s.Name, s.Tid)
	}
	s.Regs.SetRet(ret)
	s.p.sc.injected = true
	return s.SetRegs()
}

// ReadMem reads the thread's memory.
func (s *Stop) ReadMem(addr uint64, buf []byte) (int, error) { return readMem(s.Tid, addr, buf) }

// WriteMem writes the thread's (writable) memory.
func (s *Stop) WriteMem(addr uint64, buf []byte) error { return writeMem(s.Tid, addr, buf) }

// ReadString reads a NUL-terminated string of at most max bytes.
func (s *Stop) ReadString(addr uint64, max int) (string, error) {
	b, _, err := readCString(s.Tid, addr, max)
	return string(b), err
}

// Inject makes the stopped thread perform one extra system call now and
// returns its raw result; the thread's own call and registers are left as
// they were. It is how a supervisor performs inserted calls (sync, fsync
// of a directory) in the program's context.
func (s *Stop) Inject(nr int, args ...uint64) (int64, error) {
	return s.t.inject(s.p, nr, args...)
}
