package tracer

import (
	"golang.org/x/sys/unix"
)

// sync() in a sandbox. A program's sync() writes back every file system
// of the machine. For a program in a sandbox only the sandbox's file
// system is its own; the others are the host's, and the recording disks
// of crash checks running beside it (suite --jobs, or any other faultline
// run), whose block logs would then show data made durable at a moment
// their traces do not explain, and real findings disappear. With
// Cmd.SyncDir the tracer turns the program's sync() into syncfs(2) of the
// sandbox: the same request for every file the program works on. The
// trace still shows sync() = 0, as the program made it.

// syncAsSyncfs runs at the entry of a sync(): it opens SyncDir in the
// program (an injected openat) and makes the pending call syncfs of that
// descriptor. When the directory cannot be opened the program's own
// sync() runs: durability first, isolation second.
func (t *tracer) syncAsSyncfs(p *tracee, r *Regs) {
	path := append([]byte(t.c.SyncDir), 0)
	if len(path) > 2048 {
		return
	}
	// Below the stack's red zone: free while the thread is stopped.
	addr := (r.SP() - 256 - uint64(len(path))) &^ 15
	if err := writeMem(p.tid, addr, path); err != nil {
		return
	}
	fd, err := t.inject(p, unix.SYS_OPENAT, uint64(atFdcwd), addr, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil || fd < 0 {
		return
	}
	var now Regs
	if err := ptraceGetRegs(p.tid, &now); err != nil {
		t.closeSyncFD(p, int(fd))
		return
	}
	now.SetNr(unix.SYS_SYNCFS)
	now.SetArg(0, uint64(fd))
	if err := unix.PtraceSetRegs(p.tid, &now.PtraceRegs); err != nil {
		t.closeSyncFD(p, int(fd))
		return
	}
	p.sc.syncFD = int(fd)
}

// closeSyncFD closes the descriptor syncAsSyncfs opened in the program.
func (t *tracer) closeSyncFD(p *tracee, fd int) {
	t.inject(p, unix.SYS_CLOSE, uint64(fd))
}

// atFdcwd is AT_FDCWD (-100) as a register value.
const atFdcwd = ^uint64(99)
