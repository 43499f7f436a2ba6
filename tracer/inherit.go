package tracer

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// onlyStdio marks every descriptor of faultline from 3 up close-on-exec,
// so the program starts with stdin, stdout and stderr only. Descriptors
// faultline inherited from its own parent (a shell's, a CI runner's pipe)
// or that a library opened without O_CLOEXEC would otherwise pass through
// to the program and shift the numbers of the descriptors it opens, and a
// trace's descriptor numbers are part of what a replay must see again.
func onlyStdio() {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
