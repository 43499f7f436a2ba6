package blockrec

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/dustin/go-humanize"
)

// Kind says what a log entry is.
type Kind uint8

const (
	// Write is a FUSE WRITE to the image: a block-layer write.
	Write Kind = 1
	// Flush is a FUSE FSYNC on the image: a REQ_PREFLUSH or FUA barrier.
	Flush Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Write:
		return "write"
	case Flush:
		return "flush"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Entry is one request as it reached the image.
type Entry struct {
	Kind Kind
	// Pos is the trace position that was current when the request arrived
	// (Recorder.SetPosition); blockrec never interprets it.
	Pos int64
	// Off and Data describe a Write; both are zero for a Flush.
	Off  int64
	Data []byte
	// Datasync is set on a Flush that arrived as fdatasync. The loop
	// driver always sends a full fsync; it is kept for completeness.
	Datasync bool
}

// Log is a recorded run: the image when logging started and every request
// since, in arrival order.
type Log struct {
	FS        FSType
	ImageSize int64
	// StartPos is the position current when logging started; a crash site
	// that applies no write of the first epoch follows it.
	StartPos int64
	Base     []byte
	Entries  []Entry
}

// Stats counts the log's writes, flushes and written bytes.
func (l *Log) Stats() (writes, flushes int, bytes int64) {
	for _, e := range l.Entries {
		switch e.Kind {
		case Write:
			writes++
			bytes += int64(len(e.Data))
		case Flush:
			flushes++
		}
	}
	return
}

// The serialisation is little-endian and versioned:
//
//	magic   "FLTBLOG1"
//	fs      u8 length + bytes
//	size    u64 image size
//	start   i64 start position
//	nbase   u64 number of non-zero 4 KiB base blocks, then for each:
//	        u64 block index, 4096 bytes
//	nent    u64 number of entries, then for each:
//	        u8 kind, u8 flags (1 = datasync), i64 pos, i64 off,
//	        u32 length, data
//	crc     u32 CRC-32 (IEEE) of everything before it
//
// Only non-zero base blocks are stored: a fresh file system is mostly zeros.
const (
	logMagic     = "FLTBLOG1"
	logBaseBlock = 4096
)

// WriteLog serialises l to w.
func WriteLog(w io.Writer, l *Log) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var scratch [8]byte
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(scratch[:], v); bw.Write(scratch[:8]) }
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(scratch[:], v); bw.Write(scratch[:4]) }
	if int64(len(l.Base)) != l.ImageSize {
		return fmt.Errorf("blockrec: log base is %d bytes, image size %d", len(l.Base), l.ImageSize)
	}
	if len(l.FS) > 255 {
		return fmt.Errorf("blockrec: file system name too long")
	}
	bw.WriteString(logMagic)
	bw.WriteByte(byte(len(l.FS)))
	bw.WriteString(string(l.FS))
	u64(uint64(l.ImageSize))
	u64(uint64(l.StartPos))
	var nz []int64
	for b := int64(0); b*logBaseBlock < l.ImageSize; b++ {
		blk := l.Base[b*logBaseBlock : min((b+1)*logBaseBlock, l.ImageSize)]
		if !allZero(blk) {
			nz = append(nz, b)
		}
	}
	u64(uint64(len(nz)))
	for _, b := range nz {
		u64(uint64(b))
		blk := make([]byte, logBaseBlock)
		copy(blk, l.Base[b*logBaseBlock:])
		bw.Write(blk)
	}
	u64(uint64(len(l.Entries)))
	for _, e := range l.Entries {
		bw.WriteByte(byte(e.Kind))
		var fl byte
		if e.Datasync {
			fl = 1
		}
		bw.WriteByte(fl)
		u64(uint64(e.Pos))
		u64(uint64(e.Off))
		u32(uint32(len(e.Data)))
		bw.Write(e.Data)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("blockrec: writing block log: %w", err)
	}
	binary.LittleEndian.PutUint32(scratch[:], crc.Sum32())
	if _, err := w.Write(scratch[:4]); err != nil {
		return fmt.Errorf("blockrec: writing block log: %w", err)
	}
	return nil
}

// ReadLog parses what WriteLog wrote.
func ReadLog(r io.Reader) (*Log, error) {
	crc := crc32.NewIEEE()
	br := bufio.NewReaderSize(r, 1<<16)
	tr := io.TeeReader(br, crc)
	var scratch [8]byte
	var rerr error
	read := func(p []byte) {
		if rerr == nil {
			_, rerr = io.ReadFull(tr, p)
		}
	}
	u64 := func() uint64 { read(scratch[:8]); return binary.LittleEndian.Uint64(scratch[:8]) }
	u32 := func() uint32 { read(scratch[:4]); return binary.LittleEndian.Uint32(scratch[:4]) }
	u8 := func() byte { read(scratch[:1]); return scratch[0] }
	bad := func(format string, a ...any) (*Log, error) {
		return nil, fmt.Errorf("blockrec: reading block log: "+format, a...)
	}

	magic := make([]byte, len(logMagic))
	read(magic)
	if rerr != nil {
		return bad("%w", rerr)
	}
	if string(magic) != logMagic {
		return bad("not a faultline block log (magic %q)", magic)
	}
	l := &Log{}
	fsName := make([]byte, u8())
	read(fsName)
	l.FS = FSType(fsName)
	l.ImageSize = int64(u64())
	l.StartPos = int64(u64())
	if rerr != nil {
		return bad("header: %w", rerr)
	}
	if l.ImageSize <= 0 || l.ImageSize > 1<<40 {
		return bad("implausible image size %d", l.ImageSize)
	}
	l.Base = make([]byte, l.ImageSize)
	nb := u64()
	blk := make([]byte, logBaseBlock)
	for i := uint64(0); i < nb && rerr == nil; i++ {
		b := int64(u64())
		read(blk)
		if b < 0 || b*logBaseBlock >= l.ImageSize {
			return bad("base block %d outside image", b)
		}
		copy(l.Base[b*logBaseBlock:], blk)
	}
	ne := u64()
	if rerr != nil {
		return bad("base image: %w", rerr)
	}
	for i := uint64(0); i < ne && rerr == nil; i++ {
		e := Entry{Kind: Kind(u8())}
		e.Datasync = u8()&1 != 0
		e.Pos = int64(u64())
		e.Off = int64(u64())
		n := u32()
		if rerr != nil {
			break
		}
		if e.Kind != Write && e.Kind != Flush {
			return bad("entry %d: unknown kind %d", i, e.Kind)
		}
		if e.Off < 0 || e.Off+int64(n) > l.ImageSize {
			return bad("entry %d: write [%d,+%d) outside image", i, e.Off, n)
		}
		if n > 0 {
			e.Data = make([]byte, n)
			read(e.Data)
		}
		l.Entries = append(l.Entries, e)
	}
	if rerr != nil {
		return bad("entries: %w", rerr)
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(br, scratch[:4]); err != nil {
		return bad("checksum: %w", err)
	}
	if binary.LittleEndian.Uint32(scratch[:4]) != sum {
		return bad("checksum mismatch: file is damaged")
	}
	return l, nil
}

// SaveLog writes l to path atomically.
func SaveLog(path string, l *Log) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteLog(w, l) })
}

// LoadLog reads a log saved by SaveLog.
func LoadLog(path string) (*Log, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := ReadLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// WriteLogText prints the log for people, one entry per line:
//
//	#   idx epoch       pos  op     offset               length    sha256
//	     0     0        17  write  1.0 MiB (s 2048)     4.0 KiB   3f1a9c02
//	     1     0        17  flush
//
// offset is shown humanized and as the 512-byte sector number; sha256 is
// the first 4 bytes of the written data's hash, enough to spot rewrites of
// the same content.
func WriteLogText(w io.Writer, l *Log) error {
	bw := bufio.NewWriter(w)
	writes, flushes, total := l.Stats()
	fmt.Fprintf(bw, "# faultline block log: %s, image %s, %d entries: %d writes (%s), %d flushes, start position %d\n",
		l.FS, humanize.IBytes(uint64(l.ImageSize)), len(l.Entries), writes, humanize.IBytes(uint64(total)), flushes, l.StartPos)
	fmt.Fprintf(bw, "# %5s %5s %9s  %-5s  %-20s %-9s %s\n", "idx", "epoch", "pos", "op", "offset", "length", "sha256")
	epoch := 0
	for i, e := range l.Entries {
		switch e.Kind {
		case Write:
			sum := sha256.Sum256(e.Data)
			off := fmt.Sprintf("%s (s %d)", humanize.IBytes(uint64(e.Off)), e.Off/SectorSize)
			fmt.Fprintf(bw, "  %5d %5d %9d  write  %-20s %-9s %x\n", i, epoch, e.Pos, off, humanize.IBytes(uint64(len(e.Data))), sum[:4])
		case Flush:
			op := "flush"
			if e.Datasync {
				op = "fdatasync"
			}
			fmt.Fprintf(bw, "  %5d %5d %9d  %s\n", i, epoch, e.Pos, op)
			epoch++
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("blockrec: printing block log: %w", err)
	}
	return nil
}

func allZero(b []byte) bool {
	var zero [logBaseBlock]byte
	for len(b) > 0 {
		n := min(len(b), len(zero))
		if !bytes.Equal(b[:n], zero[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
