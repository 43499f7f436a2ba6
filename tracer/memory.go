package tracer

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Tracee memory is read with process_vm_readv: one system call per
// buffer, where PTRACE_PEEKDATA would need one per word. A read never
// crosses into a page it has not reached yet, so a string that ends just
// before an unmapped page is still read whole.

const pageSize = 4096

// readMem fills buf from the tracee's address space at addr and reports
// how many bytes it read; a short count means the rest was not mapped.
func readMem(pid int, addr uint64, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	n, err := vmRead(pid, addr, buf)
	if err != nil {
		if errors.Is(err, unix.EFAULT) && len(buf) > pageSize {
			return readPaged(pid, addr, buf)
		}
		return 0, fmt.Errorf("read %d bytes at %#x in pid %d: %w", len(buf), addr, pid, err)
	}
	return n, nil
}

// vmRead is one process_vm_readv. It is a raw system call: the tracee is
// stopped, so it cannot block, and it runs for most traced calls.
func vmRead(pid int, addr uint64, buf []byte) (int, error) {
	local := unix.Iovec{Base: &buf[0]}
	local.SetLen(len(buf))
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(buf)}
	n, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid), uintptr(unsafe.Pointer(&local)), 1,
		uintptr(unsafe.Pointer(&remote)), 1, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// readPaged reads page by page, stopping at the first unmapped one.
func readPaged(pid int, addr uint64, buf []byte) (int, error) {
	done := 0
	for done < len(buf) {
		a := addr + uint64(done)
		chunk := int(pageSize - a%pageSize)
		if chunk > len(buf)-done {
			chunk = len(buf) - done
		}
		n, err := vmRead(pid, a, buf[done:done+chunk])
		if err != nil || n == 0 {
			if done == 0 {
				return 0, fmt.Errorf("read at %#x in pid %d: %w", a, pid, err)
			}
			return done, nil
		}
		done += n
	}
	return done, nil
}

// readFull reads exactly len(buf) bytes or fails.
func readFull(pid int, addr uint64, buf []byte) error {
	n, err := readMem(pid, addr, buf)
	if err != nil {
		return err
	}
	if n < len(buf) {
		return fmt.Errorf("read %d bytes at %#x in pid %d: short read (%d)", len(buf), addr, pid, n)
	}
	return nil
}

// readCString reads a NUL-terminated string of at most max bytes. It
// reports whether the terminator was found within max.
func readCString(pid int, addr uint64, max int) ([]byte, bool, error) {
	var out []byte
	var page [pageSize]byte
	for len(out) < max {
		a := addr + uint64(len(out))
		chunk := int(pageSize - a%pageSize)
		if chunk > max-len(out) {
			chunk = max - len(out)
		}
		n, err := readMem(pid, a, page[:chunk])
		if err != nil {
			if len(out) == 0 {
				return nil, false, err
			}
			return out, false, nil
		}
		for i := 0; i < n; i++ {
			if page[i] == 0 {
				return append(out, page[:i]...), true, nil
			}
		}
		out = append(out, page[:n]...)
		if n < chunk {
			return out, false, nil
		}
	}
	return out, false, nil
}

// readWord reads a little-endian 64-bit word.
func readWord(pid int, addr uint64) (uint64, error) {
	var b [8]byte
	if err := readFull(pid, addr, b[:]); err != nil {
		return 0, err
	}
	return le64(b[:]), nil
}

// pointers walks the NULL-terminated array of pointers at addr (argv,
// envp), calling fn with each entry until the NULL, until fn returns
// false, or until the array runs into unmapped memory. It reads a block
// of up to 64 entries, never past the end of the page it is in, per
// system call: an environment of 40 variables is one read, not 41.
// It fails only when not even the first entry can be read.
func pointers(pid int, addr uint64, fn func(i int, p uint64) bool) (terminated bool, err error) {
	var block [64 * 8]byte
	for i := 0; ; {
		a := addr + uint64(8*i)
		chunk := int(pageSize - a%pageSize)
		if chunk > len(block) {
			chunk = len(block)
		}
		chunk &^= 7
		if chunk == 0 {
			// A misaligned array straddling a page: one word at a time.
			chunk = 8
		}
		n, err := readMem(pid, a, block[:chunk])
		if err != nil || n < 8 {
			if i == 0 {
				if err == nil {
					err = fmt.Errorf("read at %#x in pid %d: short read", a, pid)
				}
				return false, err
			}
			return false, nil
		}
		for off := 0; off+8 <= n; off += 8 {
			p := le64(block[off:])
			if p == 0 {
				return true, nil
			}
			if !fn(i, p) {
				return false, nil
			}
			i++
		}
	}
}

// readStruct reads a fixed-size kernel structure into v.
func readStruct[T any](pid int, addr uint64, v *T) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
	return readFull(pid, addr, b)
}

// writeMem writes buf into the tracee at addr (writable mappings only).
func writeMem(pid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMWritev(pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("write %d bytes at %#x in pid %d: %w", len(buf), addr, pid, err)
	}
	if n != len(buf) {
		return fmt.Errorf("write %d bytes at %#x in pid %d: short write (%d)", len(buf), addr, pid, n)
	}
	return nil
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
