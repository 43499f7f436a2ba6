package tracer

import (
	"fmt"
	"sync"

	"github.com/faultline/faultline/parser"
)

// Some edits cannot be made after the fact. A write the line cuts short
// has already written everything, and a read from a pipe or socket the
// line cuts short has consumed bytes no lseek can give back. For those
// PrepareEntry, at the entry stop, lowers the count the kernel is given to
// the line's, so the kernel does exactly what the line says; Patch, at the
// exit stop, puts the program's register back (x86-64 preserves argument
// registers across a syscall, and compiled code may rely on it).

// entryArg is a register PrepareEntry changed, to restore at exit.
type entryArg struct {
	i   int
	val uint64
}

var (
	preparedMu sync.Mutex
	prepared   = map[*tracee]entryArg{}
)

// countArgs are the calls whose count PrepareEntry may lower: the count's
// argument index.
var countArgs = map[string]int{"read": 2, "pread64": 2, "write": 2, "pwrite64": 2}

// PrepareEntry, at a call's entry stop, lowers the byte count of a read,
// pread64, write or pwrite64 whose line returns fewer bytes than the
// program asked for, so the kernel transfers only that many: a short write
// leaves the rest unwritten for the program to retry, a short read of a
// pipe leaves the rest in the pipe. Other lines need nothing at entry and
// get no change. Patch must be called at the same call's exit stop: it
// restores the program's register.
func (s *Stop) PrepareEntry(want *parser.Call) ([]string, error) {
	if want == nil {
		return nil, fmt.Errorf("prepare %s in %d: no line to prepare from", s.Name, s.Tid)
	}
	if s.Exiting {
		return nil, fmt.Errorf("prepare %s in %d: the call already ran", s.Name, s.Tid)
	}
	if want.Name != s.Name {
		return nil, fmt.Errorf("prepare %s in %d: the line is a %s call", s.Name, s.Tid, want.Name)
	}
	i, ok := countArgs[s.Name]
	if !ok || want.Result.Failed() {
		return nil, nil
	}
	n, ok := want.Result.Int()
	asked := s.Regs.Arg(i)
	if !ok || n < 0 || uint64(n) >= asked {
		return nil, nil
	}
	s.Regs.SetArg(i, uint64(n))
	if err := s.SetRegs(); err != nil {
		return nil, fmt.Errorf("prepare %s in %d: %w", s.Name, s.Tid, err)
	}
	if s.p != nil {
		preparedMu.Lock()
		prepared[s.p] = entryArg{i, asked}
		preparedMu.Unlock()
	}
	return []string{fmt.Sprintf("count %d -> %d (the kernel is asked for the line's count)", asked, n)}, nil
}

// restoreEntry puts back a register PrepareEntry changed for this call.
func (s *Stop) restoreEntry() error {
	if s.p == nil {
		return nil
	}
	preparedMu.Lock()
	a, ok := prepared[s.p]
	delete(prepared, s.p)
	preparedMu.Unlock()
	if !ok || s.Regs.Arg(a.i) == a.val {
		return nil
	}
	s.Regs.SetArg(a.i, a.val)
	if err := s.SetRegs(); err != nil {
		return fmt.Errorf("restore argument %d: %w", a.i, err)
	}
	return nil
}
