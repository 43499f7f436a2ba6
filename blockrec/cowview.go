package blockrec

import (
	"sync"
)

// cowView is one crash image, served without ever being materialised:
// reads resolve each sector through, in order, the scratch overlay (what
// the kernel wrote while mounting it: journal replay, orphan cleanup), the
// site's patch (sectors whose epoch writes were dropped), the epoch's
// writes, and the log index (earlier epochs over the base image).
type cowView struct {
	ix     *logIndex
	prefix int              // entries [0, prefix) are applied
	end    int              // entries [prefix, end) are the site's epoch
	epoch  map[int64][]byte // shared by all sites of one epoch: every write applied
	patch  map[int64][]byte // this site: sectors where a dropped unit changes the answer

	mu      sync.RWMutex
	scratch map[int64]*[SectorSize]byte
}

// epochImage maps each sector an epoch writes to its content once every
// write of the epoch is applied.
func (ix *logIndex) epochImage(ep Epoch) map[int64][]byte {
	m := map[int64][]byte{}
	for i := ep.Start; i < ep.End; i++ {
		for _, x := range ix.sectors[i] {
			m[x.sector] = x.data
		}
	}
	return m
}

// newView builds the view of a site from its epoch image: only the sectors
// of dropped units are looked at again.
func (ix *logIndex) newView(s Site, epoch map[int64][]byte) *cowView {
	v := &cowView{ix: ix, prefix: s.Start, end: s.End, epoch: epoch, scratch: map[int64]*[SectorSize]byte{}}
	if len(s.Dropped) == 0 {
		return v
	}
	v.patch = map[int64][]byte{}
	drop := func(entry int, sector int64) bool {
		for _, u := range s.Dropped {
			if u.Entry == entry && sector*SectorSize >= u.Off && sector*SectorSize < u.Off+int64(u.Len) {
				return true
			}
		}
		return false
	}
	for _, u := range s.Dropped {
		for sec := u.Off / SectorSize; sec*SectorSize < u.Off+int64(u.Len); sec++ {
			if _, done := v.patch[sec]; done {
				continue
			}
			d := ix.contentAt(sec, s.Start)
			for _, ver := range ix.versions[sec] {
				e := int(ver.entry)
				if e >= s.Start && e < s.End && !drop(e, sec) {
					d = ver.data
				}
			}
			v.patch[sec] = d
		}
	}
	return v
}

func (v *cowView) sector(s int64) []byte {
	if d, ok := v.scratch[s]; ok {
		return d[:]
	}
	if d, ok := v.patch[s]; ok {
		return d
	}
	if !v.ix.everWritten(s) {
		return v.ix.base(s)
	}
	if d, ok := v.epoch[s]; ok {
		return d
	}
	return v.ix.contentAt(s, v.prefix)
}

func (v *cowView) readAt(p []byte, off int64) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for len(p) > 0 {
		s := off / SectorSize
		in := off - s*SectorSize
		n := copy(p, v.sector(s)[in:])
		p, off = p[n:], off+int64(n)
	}
}

func (v *cowView) writeAt(p []byte, off int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for len(p) > 0 {
		s := off / SectorSize
		in := off - s*SectorSize
		d, ok := v.scratch[s]
		if !ok {
			d = new([SectorSize]byte)
			if in != 0 || len(p) < SectorSize {
				copy(d[:], v.sector(s))
			}
			v.scratch[s] = d
		}
		n := copy(d[in:], p)
		p, off = p[n:], off+int64(n)
	}
}

// scratchSectors lists the sectors the kernel wrote to this view.
func (v *cowView) scratchSectors() []int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make([]int64, 0, len(v.scratch))
	for s := range v.scratch {
		out = append(out, s)
	}
	return out
}

// flush is a no-op: a crash image has nowhere more durable to go.
func (v *cowView) flush(bool) {}

// readImage materialises a view; only tests use it, to check the views
// against images built the slow way.
func (v *cowView) readImage() []byte {
	b := make([]byte, v.ix.log.ImageSize)
	v.readAt(b, 0)
	return b
}
