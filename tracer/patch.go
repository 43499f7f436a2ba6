package tracer

import (
	"fmt"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Patching is the third point of the replay contract: a line that
// succeeds is executed, then the call's return value and decoded
// out-parameters are made to agree with the line where they differ, so
// that a hand edit of the trace takes effect. Patch compares what the
// kernel gave (read back from the stopped thread with the same structure
// layouts the decoders use) with the values the line holds, and writes
// back only the members that differ, in the kernel's ABI.
//
// Only what the line shows is compared: a member strace left out ("...")
// or a string it cut short ("abc"...) keeps the kernel's value, and
// nothing is made up that the line does not hold.

// PatchOptions force values that differ from run to run even when
// nothing was edited to agree with the line too. Without them such a
// value is patched only when it was edited, as far as the line shows:
//
//   - a stat-family timestamp when it no longer matches the date strace
//     printed next to it (a mutator's edit drops that comment, a person
//     changing the number leaves it stale);
//   - a clock reading (clock_gettime, gettimeofday, time) and a result
//     that names something the kernel hands out (a descriptor, an
//     address, a pid) when the line's result is marked INJECTED;
//   - device numbers and directory offsets never.
//
// So an edited line changes what was edited and nothing else: a stat
// marked INJECTED for its file type keeps the live mtime another,
// unedited stat of the same file reports, and a program comparing the
// two (tar's "file changed as we read it", an editor's "changed on
// disk") sees no difference the trace does not have.
type PatchOptions struct {
	// Times patches every timestamp and clock reading: st_atime/
	// st_mtime/st_ctime and their _nsec, statx's stx_*time,
	// clock_gettime, gettimeofday and time.
	Times bool
	// Devices patches the numbers of the device a file lives on (st_dev,
	// stx_dev_major/minor) and statx's stx_mnt_id: a fresh sandbox
	// mount gets a new loop device and mount id on every run.
	Devices bool
	// DirOffsets patches getdents64's d_off cookies, which are positions
	// in the live directory stream (hash values on ext4, whose seed is
	// new with every mkfs).
	DirOffsets bool
	// Results patches return values that name things the kernel hands
	// out (file descriptors, addresses, pids, time's clock reading); a
	// forced fd the program never got would only make it fail with
	// EBADF, so by default a difference there is left for divergence
	// detection to report.
	Results bool
}

// Patch makes the finished call at this exit stop agree with want, the
// trace's line for it: return value and decoded out-parameters
// (stat-family structs field by field, read/pread64/readv/preadv counts
// and data, getdents64 entries, readlink/readlinkat targets, clock
// values), where they differ. It returns one description per change made
// ("st_mode S_IFREG|0644 -> S_IFCHR|0644").
//
// Identity-free values (file type and mode, sizes, link counts, inode
// numbers, owners, rdev, counts, data, directory entries, link targets)
// are patched whenever they differ; values that differ from run to run
// only where the line was edited (see PatchOptions).
func (s *Stop) Patch(want *parser.Call) ([]string, error) {
	return s.PatchWith(want, PatchOptions{})
}

// PatchWith is Patch with run-to-run values forced to agree as opt says.
//
// A want that failed while the call succeeded gets the failure as its
// result; the call has been performed and its side effects stay, which
// the description says. A want that succeeded while the call failed gets
// its value only for calls without out-parameters (there is nothing to
// make their out-values from); for the others it is an error.
func (s *Stop) PatchWith(want *parser.Call, opt PatchOptions) ([]string, error) {
	if s.Exiting {
		if err := s.restoreEntry(); err != nil {
			return nil, fmt.Errorf("patch %s in %d: %w", s.Name, s.Tid, err)
		}
	}
	if want == nil {
		return nil, fmt.Errorf("patch %s in %d: no line to patch from", s.Name, s.Tid)
	}
	if !s.Exiting {
		return nil, fmt.Errorf("patch %s in %d: the call has not run yet (patch at its exit stop)", s.Name, s.Tid)
	}
	if want.Name != s.Name {
		return nil, fmt.Errorf("patch %s in %d: the line is a %s call", s.Name, s.Tid, want.Name)
	}
	p := &patcher{s: s, want: want, opt: opt, ret: s.Regs.Ret(), marked: want.Result.Injected()}
	if err := p.run(); err != nil {
		return p.changes, fmt.Errorf("patch %s in %d: %w", s.Name, s.Tid, err)
	}
	return p.changes, nil
}

// patcher is one Patch call's state.
type patcher struct {
	s       *Stop
	want    *parser.Call
	opt     PatchOptions
	ret     int64 // the kernel's result
	marked  bool  // the line's result carries the INJECTED marker
	changes []string
}

func (p *patcher) note(format string, args ...any) {
	p.changes = append(p.changes, fmt.Sprintf(format, args...))
}

func (p *patcher) arg(i int) uint64 { return p.s.Regs.Arg(i) }

// wantArg is the value of the line's argument i, or nil when the line
// has fewer.
func (p *patcher) wantArg(i int) *parser.Expr {
	if i >= len(p.want.Args) || p.want.Args[i] == nil {
		return nil
	}
	return p.want.Args[i].Value
}

func failedRet(ret int64) bool { return ret < 0 && ret >= -4095 }

// outPatchers are the calls whose out-parameters Patch knows. Each runs
// when both the kernel and the line say the call succeeded, and owns the
// return value too (a count is part of the data).
var outPatchers map[string]func(p *patcher, want int64) error

func init() {
	outPatchers = map[string]func(p *patcher, want int64) error{
		"stat":          func(p *patcher, w int64) error { return p.stat(1) },
		"lstat":         func(p *patcher, w int64) error { return p.stat(1) },
		"fstat":         func(p *patcher, w int64) error { return p.stat(1) },
		"newfstatat":    func(p *patcher, w int64) error { return p.stat(2) },
		"statx":         func(p *patcher, w int64) error { return p.statx(4) },
		"read":          func(p *patcher, w int64) error { return p.read(w, true) },
		"pread64":       func(p *patcher, w int64) error { return p.read(w, false) },
		"readv":         func(p *patcher, w int64) error { return p.readv(w, true) },
		"preadv":        func(p *patcher, w int64) error { return p.readv(w, false) },
		"preadv2":       func(p *patcher, w int64) error { return p.readv(w, int64(p.arg(3)) == -1) },
		"write":         func(p *patcher, w int64) error { return p.write(w, true) },
		"pwrite64":      func(p *patcher, w int64) error { return p.write(w, false) },
		"getdents64":    (*patcher).getdents,
		"readlink":      func(p *patcher, w int64) error { return p.readlink(w, 1, 2) },
		"readlinkat":    func(p *patcher, w int64) error { return p.readlink(w, 2, 3) },
		"clock_gettime": func(p *patcher, w int64) error { return p.clockGettime() },
		"gettimeofday":  func(p *patcher, w int64) error { return p.gettimeofday() },
		"time":          (*patcher).time,
	}
}

// countOnly are the calls of outPatchers with nothing but their count
// to patch: a failure of theirs can be turned into the line's success.
var countOnly = map[string]bool{"write": true, "pwrite64": true}

func (p *patcher) run() error {
	want, ok, err := wantRet(p.want.Result)
	if err != nil {
		return fmt.Errorf("the line's result: %w", err)
	}
	if !ok {
		// "= ?": the call never returned in the recording. Nothing
		// to agree with.
		return nil
	}
	switch {
	case failedRet(want):
		if want == p.ret {
			return nil
		}
		if failedRet(p.ret) {
			p.note("result %s -> %s", retText(p.ret), retText(want))
		} else {
			p.note("result %s -> %s (the call was performed: its effects stay)", retText(p.ret), retText(want))
		}
		return p.setResult(want)
	case failedRet(p.ret):
		if _, out := outPatchers[p.s.Name]; out && !countOnly[p.s.Name] {
			return fmt.Errorf("the call failed (%s) where the line succeeds (%s): its out-values cannot be made up", retText(p.ret), retText(want))
		}
		if p.volatileRet() && !p.results() {
			return nil
		}
		p.note("result %s -> %s (the call failed: its effects are missing)", retText(p.ret), retText(want))
		return p.setResult(want)
	}
	if f := outPatchers[p.s.Name]; f != nil {
		return f(p, want)
	}
	if want == p.ret || (p.volatileRet() && !p.results()) {
		return nil
	}
	p.note("result %s -> %s", retText(p.ret), retText(want))
	return p.setResult(want)
}

// results says whether a result naming a kernel object is patched.
func (p *patcher) results() bool { return p.opt.Results || p.marked }

// clocks says whether clock readings are patched.
func (p *patcher) clocks() bool { return p.opt.Times || p.marked }

// setResult replaces the return value. (Stop.SetResult cannot be used at
// an exit stop: the call's scall is already detached from the thread.)
func (p *patcher) setResult(v int64) error {
	p.s.Regs.SetRet(v)
	if p.s.p != nil && p.s.p.sc != nil {
		p.s.p.sc.injected = true
	}
	p.ret = v
	return p.s.SetRegs()
}

// volatileRet reports whether the call's result names something the
// kernel hands out afresh on each run: a descriptor, an address, a pid.
func (p *patcher) volatileRet() bool {
	if pidCalls[p.s.Name] {
		return true
	}
	r := lookup(p.s.Nr).ret
	if r == nil {
		return false
	}
	return sameFunc(r, retFD) || sameFunc(r, retHex) || sameFunc(r, retTime)
}

var pidCalls = map[string]bool{
	"fork": true, "vfork": true, "clone": true, "clone3": true, "getpid": true, "getppid": true,
	"gettid": true, "wait4": true, "waitid": true, "set_tid_address": true, "getpgid": true,
	"getpgrp": true, "getsid": true, "setsid": true,
}

// seekBy moves fd's file offset by delta, so that a read patched to a
// different count leaves the offset where the patched count puts it: a
// program that retries after a short read gets the rest of the data.
// It returns what the description should add.
func (p *patcher) seekBy(fd uint64, delta int64) (string, error) {
	if delta == 0 {
		return "", nil
	}
	r, err := p.s.Inject(unix.SYS_LSEEK, fd, uint64(delta), unix.SEEK_CUR)
	if err != nil {
		return "", fmt.Errorf("move the file offset by %d: %w", delta, err)
	}
	if r == -int64(unix.ESPIPE) {
		if delta < 0 {
			return fmt.Sprintf(" (not seekable: the %d bytes past the new count are gone)", -delta), nil
		}
		return " (not seekable)", nil
	}
	if failedRet(r) {
		return fmt.Sprintf(" (moving the file offset by %d failed: %s)", delta, retText(r)), nil
	}
	return fmt.Sprintf(" (file offset moved by %d)", delta), nil
}
