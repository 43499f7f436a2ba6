package blockrec

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExecFUSE marks every open /dev/fuse descriptor of this process
// close-on-exec. go-fuse v2.12.1 sets the flag only when it mounted through
// fusermount; after a direct mount (ours, as root) the descriptor would be
// inherited by every program faultline starts, which would then hold the
// FUSE connection of a disk it has nothing to do with and number its own
// descriptors differently from one run to the next. The caller holds
// syscall.ForkLock for reading.
func closeOnExecFUSE() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "/dev/fuse" {
			unix.CloseOnExec(fd)
		}
	}
}
