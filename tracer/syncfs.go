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
// program and makes the pending call syncfs of that descriptor. When the
// directory cannot be opened the program's own sync() runs: durability
// first, isolation second.
func (t *tracer) syncAsSyncfs(p *tracee, r *Regs) {
	s := &Stop{Tid: p.tid, Tgid: p.tgid, Nr: p.sc.nr, Name: p.sc.name(), Regs: *r, t: t, p: p}
	fd, err := s.OpenDir(t.c.SyncDir)
	if err != nil {
		return
	}
	if err := ptraceGetRegs(p.tid, &s.Regs); err != nil {
		t.closeSyncFD(p, fd)
		return
	}
	s.Regs.SetNr(unix.SYS_SYNCFS)
	s.Regs.SetArg(0, uint64(fd))
	if err := s.SetRegs(); err != nil {
		t.closeSyncFD(p, fd)
		return
	}
	p.sc.syncFD = fd
}

// closeSyncFD closes the descriptor syncAsSyncfs opened in the program.
func (t *tracer) closeSyncFD(p *tracee, fd int) {
	t.inject(p, unix.SYS_CLOSE, uint64(fd))
}
