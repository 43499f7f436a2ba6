package blockrec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"sort"
)

// logIndex answers "what did sector s contain after the first n entries"
// without materialising images: each written sector keeps the list of its
// versions in log order. It is built once per log and then only read, by
// crash-site generation and by every copy-on-write view.
type logIndex struct {
	log      *Log
	versions map[int64][]version
	// sectors[i] lists the sectors entry i wrote, with their contents.
	sectors [][]sectorData
	// written marks sectors any entry wrote, so reads of untouched ranges
	// go straight to the base image.
	written []uint64
}

type version struct {
	entry int32
	data  []byte
}

type sectorData struct {
	sector int64
	data   []byte
}

func newLogIndex(l *Log) *logIndex {
	nsec := l.ImageSize / SectorSize
	ix := &logIndex{
		log:      l,
		versions: map[int64][]version{},
		sectors:  make([][]sectorData, len(l.Entries)),
		written:  make([]uint64, (nsec+63)/64),
	}
	for i, e := range l.Entries {
		if e.Kind != Write || len(e.Data) == 0 {
			continue
		}
		first := e.Off / SectorSize
		last := (e.Off + int64(len(e.Data)) - 1) / SectorSize
		sd := make([]sectorData, 0, last-first+1)
		for s := first; s <= last; s++ {
			lo, hi := s*SectorSize, (s+1)*SectorSize
			var d []byte
			if lo >= e.Off && hi <= e.Off+int64(len(e.Data)) {
				d = e.Data[lo-e.Off : hi-e.Off]
			} else {
				// The loop driver only sends whole sectors; a partial
				// write from some other source is widened with what the
				// sector held just before, which is what the disk would
				// read back. Dropping it then also drops that old part,
				// a no-op.
				d = make([]byte, SectorSize)
				copy(d, ix.contentAt(s, i))
				a, b := max(lo, e.Off), min(hi, e.Off+int64(len(e.Data)))
				copy(d[a-lo:], e.Data[a-e.Off:b-e.Off])
			}
			sd = append(sd, sectorData{s, d})
			ix.versions[s] = append(ix.versions[s], version{int32(i), d})
			ix.written[s/64] |= 1 << (s % 64)
		}
		ix.sectors[i] = sd
	}
	return ix
}

func (ix *logIndex) everWritten(s int64) bool { return ix.written[s/64]&(1<<(s%64)) != 0 }

func (ix *logIndex) base(s int64) []byte {
	return ix.log.Base[s*SectorSize : (s+1)*SectorSize]
}

// contentAt returns sector s after entries [0, n) were applied.
func (ix *logIndex) contentAt(s int64, n int) []byte {
	if !ix.everWritten(s) {
		return ix.base(s)
	}
	vs := ix.versions[s]
	// First version at or after n; the one before it is current.
	j := sort.Search(len(vs), func(i int) bool { return int(vs[i].entry) >= n })
	if j == 0 {
		return ix.base(s)
	}
	return vs[j-1].data
}

// stateHash identifies an image by the set of (sector, content) pairs in
// which it differs from the base image. XOR makes it incremental: replacing
// a sector's content XORs out the old pair and XORs in the new one, so a
// crash site's hash costs only the sectors its epoch touched. Two images get
// the same hash exactly when they have the same content (up to SHA-256
// collisions).
type stateHash [32]byte

func (h *stateHash) xor(o stateHash) {
	for i := range h {
		h[i] ^= o[i]
	}
}

// pairHash is the contribution of sector s holding d: zero if that is what
// the base image holds there.
func (ix *logIndex) pairHash(s int64, d []byte) stateHash {
	if bytes.Equal(d, ix.base(s)) {
		return stateHash{}
	}
	var buf [8 + SectorSize]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(s))
	copy(buf[8:], d)
	return sha256.Sum256(buf[:])
}
