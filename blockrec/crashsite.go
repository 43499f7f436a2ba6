package blockrec

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Granularity is what a crash site drops: whole write requests, or single
// 512-byte sectors of them as in C³ (a request the disk tore apart).
type Granularity int

const (
	Requests Granularity = iota
	Sectors
)

func (g Granularity) String() string {
	if g == Sectors {
		return "sectors"
	}
	return "requests"
}

const (
	// DefaultK is how many in-flight writes a crash site drops at most:
	// Flytrap found most bugs with one or two.
	DefaultK = 2
	// DefaultCap bounds the crash states of one epoch, as C³'s code does.
	DefaultCap = 127
	// maxTriesPerEpoch bounds the subsets tried in one epoch, so an epoch
	// that mostly rewrites sectors with what they already hold (every
	// subset a duplicate) cannot stall generation.
	maxTriesPerEpoch = 1 << 17
)

// SiteOptions bound crash-site generation.
type SiteOptions struct {
	// K is the most units a site drops; 0 means DefaultK. Negative means
	// none: only the state at each epoch's end.
	K int
	// Cap is the most distinct sites per epoch; 0 means DefaultCap,
	// negative means no cap.
	Cap         int
	Granularity Granularity
}

func (o SiteOptions) norm() (k, capN int) {
	k, capN = o.K, o.Cap
	if k == 0 {
		k = DefaultK
	}
	if k < 0 {
		k = 0
	}
	if capN == 0 {
		capN = DefaultCap
	}
	return k, capN
}

// Unit is one droppable piece of an epoch: a write request, or one sector
// of it.
type Unit struct {
	Entry int   // index in Log.Entries
	Off   int64 // byte offset on the image
	Len   int   // bytes
}

// Site is one crash state: every entry before Start applied, and of the
// epoch's writes [Start, End) all but Dropped, in log order.
type Site struct {
	ID    int
	Epoch int // Epoch.Index
	Start int
	End   int
	// Pos is the trace position the crash follows: the tag of the last
	// applied write of the epoch, or of the flush that opened it if none
	// is applied (Log.StartPos before the first flush).
	Pos int64
	// Last is the index of the entry Pos comes from, -1 for Log.StartPos.
	Last    int
	Dropped []Unit
	// Hash identifies the resulting image; two sites with the same hash
	// have identical images, and Sites returns only one of them.
	Hash [32]byte
}

func (s Site) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "site %d: epoch %d, after pos %d (entry %d), entries <%d applied", s.ID, s.Epoch, s.Pos, s.Last, s.Start)
	if len(s.Dropped) == 0 {
		fmt.Fprintf(&b, ", [%d,%d) all applied", s.Start, s.End)
	} else {
		fmt.Fprintf(&b, ", [%d,%d) dropping", s.Start, s.End)
		for _, u := range s.Dropped {
			fmt.Fprintf(&b, " #%d@%d+%d", u.Entry, u.Off, u.Len)
		}
	}
	fmt.Fprintf(&b, ", image %s", hex.EncodeToString(s.Hash[:6]))
	return b.String()
}

// Sites generates crash sites after C³ Algorithm 1, bounded as DESIGN.md
// says: for each epoch, with all earlier epochs applied, every subset of
// its units that drops at most K of them, fewest drops first, at most Cap
// distinct images per epoch, and each distinct image once over the whole
// log.
//
// Dropping units rather than choosing prefixes is deliberate: a crash in
// the middle of an epoch, after write j, equals the end-of-epoch state with
// every later write dropped, and the writes a file system leaves in flight
// at a barrier are the ones whose order nothing guarantees.
func Sites(l *Log, opt SiteOptions) []Site {
	return newLogIndex(l).sites(opt)
}

// epochUnits splits an epoch into units and records which sectors each
// covers.
func (ix *logIndex) epochUnits(ep Epoch, g Granularity) ([]Unit, [][]sectorData) {
	var units []Unit
	var secs [][]sectorData
	for i := ep.Start; i < ep.End; i++ {
		e := ix.log.Entries[i]
		sd := ix.sectors[i]
		if len(sd) == 0 {
			continue
		}
		if g == Requests {
			units = append(units, Unit{Entry: i, Off: e.Off, Len: len(e.Data)})
			secs = append(secs, sd)
			continue
		}
		for j := range sd {
			units = append(units, Unit{Entry: i, Off: sd[j].sector * SectorSize, Len: SectorSize})
			secs = append(secs, sd[j:j+1])
		}
	}
	return units, secs
}

func (ix *logIndex) sites(opt SiteOptions) []Site {
	k, capN := opt.norm()
	var out []Site
	seen := map[stateHash]bool{}
	var state stateHash // hash of the image before the current epoch
	// The base image itself is a crash state only if some epoch can drop
	// all of its writes; it is found like any other.
	for _, ep := range Epochs(ix.log) {
		units, secs := ix.epochUnits(ep, opt.Granularity)
		n := len(units)

		// Per sector: its content before the epoch, and which units write
		// it, in order.
		type secInfo struct {
			old     []byte
			hOld    stateHash
			writers []int
			hAll    stateHash
		}
		info := map[int64]*secInfo{}
		var order []int64
		for u, sd := range secs {
			for _, x := range sd {
				si := info[x.sector]
				if si == nil {
					old := ix.contentAt(x.sector, ep.Start)
					si = &secInfo{old: old, hOld: ix.pairHash(x.sector, old)}
					info[x.sector] = si
					order = append(order, x.sector)
				}
				si.writers = append(si.writers, u)
			}
		}
		// dataOf finds what unit u writes to sector s.
		dataOf := func(u int, s int64) []byte {
			for _, x := range secs[u] {
				if x.sector == s {
					return x.data
				}
			}
			panic("blockrec: unit does not cover sector")
		}
		all := state
		for _, s := range order {
			si := info[s]
			si.hAll = ix.pairHash(s, dataOf(si.writers[len(si.writers)-1], s))
			all.xor(si.hOld)
			all.xor(si.hAll)
		}

		emitted, tries := 0, 0
		dropped := make([]bool, n)
		touched := map[int64]bool{}
		try := func(combo []int) bool {
			tries++
			h := all
			clear(touched)
			for _, u := range combo {
				dropped[u] = true
			}
			for _, u := range combo {
				for _, x := range secs[u] {
					if touched[x.sector] {
						continue
					}
					touched[x.sector] = true
					si := info[x.sector]
					newH := si.hOld
					for w := len(si.writers) - 1; w >= 0; w-- {
						if !dropped[si.writers[w]] {
							newH = ix.pairHash(x.sector, dataOf(si.writers[w], x.sector))
							break
						}
					}
					h.xor(si.hAll)
					h.xor(newH)
				}
			}
			if !seen[h] {
				seen[h] = true
				site := Site{ID: len(out), Epoch: ep.Index, Start: ep.Start, End: ep.End, Hash: h, Last: -1, Pos: ix.log.StartPos}
				if ep.Start > 0 {
					site.Last = ep.Start - 1
					site.Pos = ix.log.Entries[ep.Start-1].Pos
				}
				for u := n - 1; u >= 0; u-- {
					if !dropped[u] {
						site.Last = units[u].Entry
						site.Pos = ix.log.Entries[units[u].Entry].Pos
						break
					}
				}
				for _, u := range combo {
					site.Dropped = append(site.Dropped, units[u])
				}
				out = append(out, site)
				emitted++
			}
			for _, u := range combo {
				dropped[u] = false
			}
			return (capN < 0 || emitted < capN) && tries < maxTriesPerEpoch
		}
		forCombinations(n, min(k, n), try)
		state = all
	}
	return out
}

// forCombinations calls f with every subset of {0..n-1} of size 0, 1, ...,
// maxSize, in lexicographic order within a size, until f returns false.
func forCombinations(n, maxSize int, f func([]int) bool) {
	for size := 0; size <= maxSize; size++ {
		c := make([]int, size)
		for i := range c {
			c[i] = i
		}
		for {
			if !f(c) {
				return
			}
			// Advance to the next combination.
			i := size - 1
			for i >= 0 && c[i] == n-size+i {
				i--
			}
			if i < 0 {
				break
			}
			c[i]++
			for j := i + 1; j < size; j++ {
				c[j] = c[j-1] + 1
			}
		}
	}
}
