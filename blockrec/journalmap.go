package blockrec

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// JournalBlock says what a block of ext4's journal held after a write.
type JournalBlock struct {
	// Kind is "descriptor", "commit", "revoke", "superblock" or "copy".
	Kind string
	// Target is, for a copy, the file-system block it is a copy of: the
	// block the journal replay writes it to.
	Target int64
}

const (
	jbd2Magic      = 0xc03b3998
	jbd2Descriptor = 1
	jbd2Commit     = 2
	jbd2SBv1       = 3
	jbd2SBv2       = 4
	jbd2Revoke     = 5

	jbd2Feature64bit = 0x2
	jbd2FeatureCsum2 = 0x8
	jbd2FeatureCsum3 = 0x10

	jbd2TagEscape   = 0x1
	jbd2TagSameUUID = 0x2
	jbd2TagLast     = 0x8
)

// JournalBlocks decodes the journal blocks written by the log's first n
// entries: which are descriptor and commit blocks, and which file-system
// block each data block of a transaction is a copy of. A dropped write to
// the journal then reads as "the journal's copy of the inode table" instead
// of just "(journal)".
func (m *FileMap) JournalBlocks(l *Log, n int) (map[int64]JournalBlock, error) {
	phys, err := m.journalPhys()
	if err != nil {
		return nil, err
	}
	logical := make(map[int64]int, len(phys))
	for i, p := range phys {
		logical[p] = i
	}
	tagSize, err := m.journalTagSize(phys)
	if err != nil {
		return nil, err
	}
	bs := m.BlockSize
	out := map[int64]JournalBlock{}
	for i := 0; i < n && i < len(l.Entries); i++ {
		e := l.Entries[i]
		if e.Kind != Write {
			continue
		}
		for off := int64(0); off+bs <= int64(len(e.Data)); off += bs {
			if (e.Off+off)%bs != 0 {
				continue
			}
			blk := (e.Off + off) / bs
			j, inJournal := logical[blk]
			if !inJournal {
				continue
			}
			d := e.Data[off : off+bs]
			if binary.BigEndian.Uint32(d) != jbd2Magic {
				if _, known := out[blk]; !known {
					out[blk] = JournalBlock{Kind: "copy", Target: -1}
				}
				continue
			}
			switch binary.BigEndian.Uint32(d[4:]) {
			case jbd2Descriptor:
				out[blk] = JournalBlock{Kind: "descriptor", Target: -1}
				for k, target := range descriptorTargets(d, tagSize) {
					if j+1+k < len(phys) {
						out[phys[j+1+k]] = JournalBlock{Kind: "copy", Target: target}
					}
				}
			case jbd2Commit:
				out[blk] = JournalBlock{Kind: "commit", Target: -1}
			case jbd2Revoke:
				out[blk] = JournalBlock{Kind: "revoke", Target: -1}
			case jbd2SBv1, jbd2SBv2:
				out[blk] = JournalBlock{Kind: "superblock", Target: -1}
			}
		}
	}
	return out, nil
}

// descriptorTargets lists the file-system blocks a descriptor block's tags
// name, in the order their copies follow it.
func descriptorTargets(d []byte, tagSize int) []int64 {
	var out []int64
	off := 12
	for off+tagSize <= len(d) {
		var blk uint64
		var flags uint32
		if tagSize == 16 { // journal_block_tag3_t
			blk = uint64(binary.BigEndian.Uint32(d[off:]))
			flags = binary.BigEndian.Uint32(d[off+4:])
			blk |= uint64(binary.BigEndian.Uint32(d[off+8:])) << 32
		} else { // journal_block_tag_t
			blk = uint64(binary.BigEndian.Uint32(d[off:]))
			flags = uint32(binary.BigEndian.Uint16(d[off+6:]))
			if tagSize >= 12 {
				blk |= uint64(binary.BigEndian.Uint32(d[off+8:])) << 32
			}
		}
		out = append(out, int64(blk))
		off += tagSize
		if flags&jbd2TagSameUUID == 0 {
			off += 16
		}
		if flags&jbd2TagLast != 0 {
			break
		}
	}
	return out
}

// journalPhys lists the journal inode's blocks in logical order.
func (m *FileMap) journalPhys() ([]int64, error) {
	if m.journal != nil {
		return m.journal, nil
	}
	out, err := m.debugfs("blocks <8>")
	if err != nil {
		return nil, err
	}
	res := responses(out)
	if len(res) == 0 {
		return nil, fmt.Errorf("blockrec: debugfs listed no journal blocks in %s", m.img)
	}
	for _, f := range strings.Fields(res[0]) {
		b, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("blockrec: journal blocks of %s: %q", m.img, res[0])
		}
		m.journal = append(m.journal, b)
	}
	if len(m.journal) == 0 {
		return nil, fmt.Errorf("blockrec: %s has no journal", m.img)
	}
	return m.journal, nil
}

// journalTagSize reads the journal superblock's features, as jbd2's
// journal_tag_bytes does.
func (m *FileMap) journalTagSize(phys []int64) (int, error) {
	f, err := os.Open(m.img)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var sb [0x30]byte
	if _, err := f.ReadAt(sb[:], phys[0]*m.BlockSize); err != nil {
		return 0, fmt.Errorf("blockrec: reading the journal superblock of %s: %w", m.img, err)
	}
	if binary.BigEndian.Uint32(sb[:]) != jbd2Magic {
		return 0, fmt.Errorf("blockrec: %s: no journal superblock at block %d", m.img, phys[0])
	}
	incompat := binary.BigEndian.Uint32(sb[0x28:])
	if incompat&jbd2FeatureCsum3 != 0 {
		return 16, nil
	}
	size := 12
	if incompat&jbd2FeatureCsum2 != 0 {
		size += 2
	}
	if incompat&jbd2Feature64bit == 0 {
		size -= 4
	}
	return size, nil
}
