package tracer

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spinner is how the tracer waits for the next stop. A blocking wait4
// leaves the Go scheduler (the P is handed off and must be won back on
// return) and needs a wake-up, which together cost more than a stop of a
// syscall-heavy program; polling with WNOHANG first avoids both when the
// stop is near. But a poll is a system call of a few microseconds on a
// small VM, and polls that find nothing take the CPU the tracee may need:
// at a program's start, where the dynamic loader's page faults make the
// gaps between stops long, 50 polls before every block made recording
// /bin/true 0.6 ms slower than blocking at once, while find needed them
// (2.95 s with no polls, 2.00 s with 50, 1.92 s with 200; most of its
// stops come after 5-19 polls).
//
// So the number of polls adapts: a stop found while polling raises it to
// twice the polls that stop took (at least minSpin more), a stop that had
// to be waited for halves it.
type spinner struct {
	polls int
}

const (
	minSpin   = 8
	maxSpin   = 200
	startSpin = 16
)

// spinCPUs: on one CPU the tracee cannot run while the tracer polls, so
// there it always blocks at once.
var spinCPUs = runtime.NumCPU() > 1

// wait4 waits only for this thread's children and tracees
// (__WNOTHREAD): a wait for any pid must not reap the children other
// goroutines started with os/exec, as it would when two traced runs, or a
// run and a setup command, go on at once in one process.
func (s *spinner) wait4(pid int, ws *unix.WaitStatus) (int, error) {
	if spinCPUs {
		if s.polls == 0 {
			s.polls = startSpin
		}
		for i := 0; i < s.polls; i++ {
			r, _, e := unix.RawSyscall6(unix.SYS_WAIT4, uintptr(pid), uintptr(unsafe.Pointer(ws)), uintptr(unix.WALL|unix.WNOTHREAD|unix.WNOHANG), 0, 0, 0)
			if e == 0 && r != 0 {
				s.polls = max(s.polls, min(maxSpin, 2*i+minSpin))
				return int(r), nil
			}
			if e != 0 && e != unix.EINTR {
				return -1, e
			}
		}
		s.polls = max(minSpin, s.polls/2)
	}
	for {
		n, err := unix.Wait4(pid, ws, unix.WALL|unix.WNOTHREAD, nil)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}
