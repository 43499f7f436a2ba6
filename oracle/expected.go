package oracle

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/faultline/faultline/blockrec"
)

// Expected is one expected snapshot: the sandbox as the program left it
// after a metadata call (or at start or end), with the trace position it
// was taken at.
type Expected struct {
	Pos      int64 // trace position (line) after which it was taken
	Label    string
	Snapshot *blockrec.Snapshot
	Hist     Histogram
	key      [32]byte
}

// ExpectedSet collects expected snapshots in trace order, dropping empty
// ones (a crash state always contains nothing) and merging duplicates: the
// check only needs each distinct state once, and the first position it was
// seen at names it.
type ExpectedSet struct {
	list []*Expected
	seen map[[32]byte]bool
}

// Add records a snapshot taken at pos. It reports whether the snapshot was
// kept (false for an empty or an already-seen state).
func (s *ExpectedSet) Add(pos int64, label string, snap *blockrec.Snapshot) bool {
	if s.seen == nil {
		s.seen = map[[32]byte]bool{}
	}
	h := HistogramOf(snap)
	if h.Total() == 0 {
		return false
	}
	k := stateKey(snap)
	if s.seen[k] {
		return false
	}
	s.seen[k] = true
	s.list = append(s.list, &Expected{Pos: pos, Label: label, Snapshot: snap, Hist: h, key: k})
	return true
}

// All returns the kept snapshots in the order they were added.
func (s *ExpectedSet) All() []*Expected { return s.list }

// Len is the number of distinct non-empty expected snapshots.
func (s *ExpectedSet) Len() int { return len(s.list) }

// stateKey identifies a state by its files' paths, types and contents.
func stateKey(snap *blockrec.Snapshot) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, node := range snap.Nodes {
		h.Write([]byte(node.Path))
		h.Write([]byte{0, byte(node.Type)})
		binary.LittleEndian.PutUint64(n[:], uint64(node.Size))
		h.Write(n[:])
		h.Write(node.SHA256[:])
		h.Write([]byte(node.Target))
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}
