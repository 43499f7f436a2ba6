package tracer

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Reads, directory entries and link targets: a count and the bytes that
// go with it. The line's bytes are written only when strace printed them
// whole; a count the line shortens is applied whatever the data shows,
// and a count it lengthens needs the whole data (nothing is made up).

// read patches read and pread64. advances says the call moves the file
// offset, which is then moved by the difference in counts.
func (p *patcher) read(want int64, advances bool) error {
	fd, buf, size := p.arg(0), p.arg(1), p.arg(2)
	data, trunc, isStr, err := strOf(p.wantArg(1))
	if err != nil {
		return fmt.Errorf("buf: %w", err)
	}
	if err := checkCount(want, size, "buffer"); err != nil {
		return err
	}
	complete := isStr && !trunc
	if complete && int64(len(data)) != want {
		return fmt.Errorf("the line's buffer holds %d bytes but its result says %d", len(data), want)
	}
	if !complete && want > p.ret {
		return fmt.Errorf("the line returns %d bytes where the kernel read %d, but shows only %d of them: the rest cannot be made up", want, p.ret, len(data))
	}
	if complete {
		got := make([]byte, p.ret)
		if err := readFull(p.s.Tid, buf, got); err != nil {
			return fmt.Errorf("read back the buffer: %w", err)
		}
		if want > p.ret || !bytes.Equal(got[:want], data) {
			if err := writeMem(p.s.Tid, buf, data); err != nil {
				return fmt.Errorf("write the line's data: %w", err)
			}
			p.note("buf %s -> %s", quoteShort(got), quoteShort(data))
		}
	}
	return p.count(want, fd, advances)
}

// count sets a read's result to want, moving the offset when advances.
func (p *patcher) count(want int64, fd uint64, advances bool) error {
	if want == p.ret {
		return nil
	}
	how := ""
	if advances {
		var err error
		if how, err = p.seekBy(fd, want-p.ret); err != nil {
			return err
		}
	}
	p.note("result %s -> %s%s", retText(p.ret), retText(want), how)
	return p.setResult(want)
}

func checkCount(want int64, size uint64, what string) error {
	if want < 0 {
		return fmt.Errorf("the line's result %d is not a count", want)
	}
	if uint64(want) > size {
		return fmt.Errorf("the line's count %d exceeds the program's %s of %d bytes", want, what, size)
	}
	return nil
}

// write patches write and pwrite64's count. The bytes are written by
// then: a shorter count moves the file offset back over the rest, so the
// program's retry rewrites them in place, as after a real short write (see
// PrepareEntry for the exact way, which also serves pipes and O_APPEND).
func (p *patcher) write(want int64, advances bool) error {
	if err := checkCount(want, p.arg(2), "count"); err != nil {
		return err
	}
	if want == p.ret {
		return nil
	}
	if want > p.ret {
		p.note("result %s -> %s (only %d bytes were written)", retText(p.ret), retText(want), p.ret)
		return p.setResult(want)
	}
	fd := p.arg(0)
	how := fmt.Sprintf(" (%d bytes past the new count stay written)", p.ret-want)
	if advances {
		fl, err := p.s.Inject(unix.SYS_FCNTL, fd, unix.F_GETFL)
		if err != nil {
			return fmt.Errorf("read the descriptor's flags: %w", err)
		}
		if failedRet(fl) || fl&unix.O_APPEND == 0 {
			if how, err = p.seekBy(fd, want-p.ret); err != nil {
				return err
			}
		} else {
			how = fmt.Sprintf(" (O_APPEND: %d bytes past the new count stay written)", p.ret-want)
		}
	}
	p.note("result %s -> %s%s", retText(p.ret), retText(want), how)
	return p.setResult(want)
}

// readv patches readv, preadv and preadv2: the line's vectors are taken
// as one run of bytes and scattered over the program's vectors.
func (p *patcher) readv(want int64, advances bool) error {
	fd, addr, n := p.arg(0), p.arg(1), p.arg(2)
	if n > 1024 {
		return fmt.Errorf("iovcnt %d is more than the recorder decodes", n)
	}
	vs := make([]iovec, n)
	var room uint64
	for j := range vs {
		if err := readStruct(p.s.Tid, addr+uint64(16*j), &vs[j]); err != nil {
			return fmt.Errorf("read iovec %d: %w", j, err)
		}
		room += vs[j].Len
	}
	if err := checkCount(want, room, "vectors"); err != nil {
		return err
	}
	var data []byte
	complete := false
	if arr := arrayOf(p.wantArg(1)); arr != nil {
		complete = true
		for j, el := range arr.Elems {
			st := structOf(el.Value)
			if st == nil {
				// strace's "..." after -s vectors: complete only if
				// the vectors shown already hold every byte.
				complete = complete && int64(len(data)) == want
				break
			}
			f := st.Field("iov_base")
			if f == nil {
				return fmt.Errorf("iovec %d of the line has no iov_base", j)
			}
			b, trunc, isStr, err := strOf(f.Value)
			if err != nil {
				return fmt.Errorf("iov_base of iovec %d: %w", j, err)
			}
			if trunc {
				complete = false
			}
			if isStr {
				data = append(data, b...)
			}
		}
	}
	if complete && int64(len(data)) != want {
		return fmt.Errorf("the line's vectors hold %d bytes but its result says %d", len(data), want)
	}
	if !complete && want > p.ret {
		return fmt.Errorf("the line returns %d bytes where the kernel read %d, but does not show them all: the rest cannot be made up", want, p.ret)
	}
	if complete {
		got := make([]byte, 0, p.ret)
		left := p.ret
		for _, v := range vs {
			k := int64(v.Len)
			if k > left {
				k = left
			}
			if k <= 0 {
				break
			}
			b := make([]byte, k)
			if err := readFull(p.s.Tid, v.Base, b); err != nil {
				return fmt.Errorf("read back the vectors: %w", err)
			}
			got = append(got, b...)
			left -= k
		}
		if want > p.ret || !bytes.Equal(got[:want], data) {
			rest := data
			for _, v := range vs {
				if len(rest) == 0 {
					break
				}
				k := uint64(len(rest))
				if k > v.Len {
					k = v.Len
				}
				if err := writeMem(p.s.Tid, v.Base, rest[:k]); err != nil {
					return fmt.Errorf("write the line's data: %w", err)
				}
				rest = rest[k:]
			}
			p.note("iov %s -> %s", quoteShort(got), quoteShort(data))
		}
	}
	return p.count(want, fd, advances)
}

// dirent is one linux_dirent64.
type dirent struct {
	ino  uint64
	off  int64
	typ  uint8
	name []byte
}

// direntHead is offsetof(struct linux_dirent64, d_name).
const direntHead = 19

// reclen is the record length filldir64 gives a name: header, name and
// NUL rounded up to 8 bytes.
func reclen(name []byte) int { return (direntHead + len(name) + 1 + 7) &^ 7 }

// parseDirents splits a getdents64 buffer as kDirents does.
func parseDirents(b []byte) []dirent {
	var out []dirent
	for off := 0; off+direntHead <= len(b); {
		rl := int(uint16(b[off+16]) | uint16(b[off+17])<<8)
		if rl == 0 || off+rl > len(b) {
			break
		}
		name := b[off+direntHead : off+rl]
		if k := bytes.IndexByte(name, 0); k >= 0 {
			name = name[:k]
		}
		out = append(out, dirent{ino: le64(b[off:]), off: int64(le64(b[off+8:])), typ: b[off+18], name: name})
		off += rl
	}
	return out
}

// encodeDirents lays entries out as the kernel does.
func encodeDirents(ents []dirent) []byte {
	var b []byte
	for _, e := range ents {
		rl := reclen(e.name)
		rec := make([]byte, rl)
		putLE64(rec[0:], e.ino)
		putLE64(rec[8:], uint64(e.off))
		rec[16], rec[17] = byte(rl), byte(rl>>8)
		rec[18] = e.typ
		copy(rec[direntHead:], e.name)
		b = append(b, rec...)
	}
	return b
}

func putLE64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// direntsOf reads the line's entry array.
func direntsOf(arr *parser.Array) ([]dirent, error) {
	var out []dirent
	for j, el := range arr.Elems {
		st := structOf(el.Value)
		if st == nil {
			return nil, fmt.Errorf("entry %d is not a structure", j)
		}
		var e dirent
		for _, f := range st.Fields {
			var err error
			switch f.Name {
			case "d_ino":
				e.ino, err = uintOf(f.Value)
			case "d_off":
				e.off, err = intOf(f.Value)
			case "d_reclen":
				// Recomputed from the name, so an edited name needs no
				// arithmetic by hand.
			case "d_type":
				var t uint64
				t, err = enumOf(f.Value, dirTypes)
				if err == nil && t > 0xff {
					err = fmt.Errorf("%d does not fit d_type", t)
				}
				e.typ = uint8(t)
			case "d_name":
				var ok, trunc bool
				e.name, trunc, ok, err = strOf(f.Value)
				switch {
				case err != nil:
				case !ok || trunc:
					err = fmt.Errorf("%s is not a whole name", parser.Format(f.Value))
				case len(e.name) == 0 || bytes.IndexByte(e.name, 0) >= 0 || bytes.IndexByte(e.name, '/') >= 0:
					err = fmt.Errorf("%s is not a file name", parser.Format(f.Value))
				}
			default:
				err = fmt.Errorf("unknown member")
			}
			if err != nil {
				return nil, fmt.Errorf("entry %d: %s: %w", j, f.Name, err)
			}
		}
		if st.Field("d_name") == nil {
			return nil, fmt.Errorf("entry %d has no d_name", j)
		}
		out = append(out, e)
	}
	return out, nil
}

// entryCount reads the "/* 5 entries */" of getdents64 without -v.
func entryCount(e *parser.Expr) (int, bool) {
	if e == nil || len(e.Tail) > 0 {
		return 0, false
	}
	f := strings.Fields(commentText(e.Comment))
	if len(f) != 2 || (f[1] != "entries" && f[1] != "entry") {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil && n >= 0
}

func direntNames(ents []dirent) string {
	var names []string
	for _, e := range ents {
		names = append(names, strconv.Quote(string(e.name))+"/"+parser.Format(dirTypes.expr(uint64(e.typ), "")))
	}
	return "[" + strings.Join(names, " ") + "]"
}

// getdents patches getdents64's entries: re-encoded from the line's
// array with -v, cut to the line's count without it.
func (p *patcher) getdents(want int64) error {
	buf, size := p.arg(1), p.arg(2)
	got := make([]byte, p.ret)
	if err := readFull(p.s.Tid, buf, got); err != nil {
		return fmt.Errorf("read back the entries: %w", err)
	}
	have := parseDirents(got)
	v := p.wantArg(1)
	arr := arrayOf(v)
	if arr == nil {
		n, ok := entryCount(v)
		if !ok {
			if want == 0 && p.ret != 0 {
				n, ok = 0, true // "= 0": the end of the directory
			} else {
				return p.count(want, 0, false)
			}
		}
		if n > len(have) {
			return fmt.Errorf("the line has %d entries where the kernel gave %d, without -v to say what they are", n, len(have))
		}
		if n == len(have) {
			return nil
		}
		keep := encodeDirents(have[:n])
		p.note("entries %s -> %s", direntNames(have), direntNames(have[:n]))
		return p.count(int64(len(keep)), 0, false)
	}
	ents, err := direntsOf(arr)
	if err != nil {
		return fmt.Errorf("dirents: %w", err)
	}
	same := len(ents) == len(have)
	for j := 0; same && j < len(ents); j++ {
		a, b := ents[j], have[j]
		same = a.ino == b.ino && a.typ == b.typ && bytes.Equal(a.name, b.name) && (a.off == b.off || !p.opt.DirOffsets)
	}
	if same {
		return nil
	}
	if !p.opt.DirOffsets {
		// Keep the live cookie of an entry the kernel also gave, so a
		// seekdir to it still lands in the live directory stream.
		live := map[string]int64{}
		for _, h := range have {
			live[string(h.name)] = h.off
		}
		for j := range ents {
			if off, ok := live[string(ents[j].name)]; ok {
				ents[j].off = off
			}
		}
	}
	enc := encodeDirents(ents)
	if uint64(len(enc)) > size {
		return fmt.Errorf("the line's entries take %d bytes, more than the program's buffer of %d", len(enc), size)
	}
	if err := writeMem(p.s.Tid, buf, enc); err != nil {
		return fmt.Errorf("write the line's entries: %w", err)
	}
	p.note("entries %s -> %s", direntNames(have), direntNames(ents))
	return p.count(int64(len(enc)), 0, false)
}

// readlink patches readlink and readlinkat: the target (never
// NUL-terminated) and its length, cut at bufsiz as the kernel cuts it.
func (p *patcher) readlink(want int64, bufArg, sizeArg int) error {
	buf, size := p.arg(bufArg), p.arg(sizeArg)
	data, trunc, isStr, err := strOf(p.wantArg(bufArg))
	if err != nil {
		return fmt.Errorf("buf: %w", err)
	}
	complete := isStr && !trunc
	if complete && int64(len(data)) != want {
		return fmt.Errorf("the line's target has %d bytes but its result says %d", len(data), want)
	}
	if !complete && want > p.ret {
		return fmt.Errorf("the line's target is %d bytes where the kernel's is %d, but the line does not show it whole", want, p.ret)
	}
	if complete && uint64(len(data)) > size {
		data = data[:size]
		want = int64(size)
	}
	if want < 0 {
		return fmt.Errorf("the line's result %d is not a length", want)
	}
	if complete {
		got := make([]byte, p.ret)
		if err := readFull(p.s.Tid, buf, got); err != nil {
			return fmt.Errorf("read back the target: %w", err)
		}
		if !bytes.Equal(got, data) {
			if err := writeMem(p.s.Tid, buf, data); err != nil {
				return fmt.Errorf("write the line's target: %w", err)
			}
			p.note("target %s -> %s", quoteShort(got), quoteShort(data))
		}
	}
	return p.count(want, 0, false)
}
