package tracer

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Opening a directory in the program. Syncing the sandbox means a syncfs
// or fsync of one of its directories from the program's own context (its
// mount namespace, its root): the tracer opens the directory there by an
// injected openat, with the path written into the program's memory.

// atFdcwd is AT_FDCWD (-100) as a register value.
const atFdcwd = ^uint64(99)

// OpenDir opens dir (O_RDONLY|O_DIRECTORY|O_CLOEXEC) in the stopped
// program and returns the descriptor; the caller closes it (an injected
// close).
func (s *Stop) OpenDir(dir string) (int, error) {
	addr, release, err := s.PutString(dir)
	if err != nil {
		return 0, err
	}
	defer release()
	fd, err := s.Inject(unix.SYS_OPENAT, atFdcwd, addr, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return 0, err
	}
	if fd < 0 {
		return 0, fmt.Errorf("open %s in pid %d: %w", dir, s.Tid, unix.Errno(-fd))
	}
	return int(fd), nil
}

// PutString puts a NUL-terminated string into the stopped thread's
// memory: below its stack's red zone (free while the thread is stopped),
// or in a page mapped for the purpose when that is not writable; release
// unmaps that page.
func (s *Stop) PutString(str string) (addr uint64, release func(), err error) {
	b := append([]byte(str), 0)
	if len(b) < 2048 {
		addr := (s.Regs.SP() - 256 - uint64(len(b))) &^ 15
		if err := s.WriteMem(addr, b); err == nil {
			return addr, func() {}, nil
		}
	}
	size := uint64((len(b) + 4095) &^ 4095)
	m, err := s.Inject(unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return 0, nil, err
	}
	if m < 0 && m > -4096 {
		return 0, nil, fmt.Errorf("mmap in pid %d: %w", s.Tid, unix.Errno(-m))
	}
	release = func() { s.Inject(unix.SYS_MUNMAP, uint64(m), size) }
	if err := s.WriteMem(uint64(m), b); err != nil {
		release()
		return 0, nil, err
	}
	return uint64(m), release, nil
}
