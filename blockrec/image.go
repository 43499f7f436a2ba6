package blockrec

import (
	"sync"
	"sync/atomic"
)

// SectorSize is the unit of the crash model's sector granularity and of the
// copy-on-write indexes: the loop device's logical block size, so every
// request the loop driver sends is aligned to it.
const SectorSize = 512

// DefaultSize is the image size used when a Recorder does not set one.
const DefaultSize = 32 << 20

// image is the recording disk's contents plus its block log. One mutex
// covers both so the log order is exactly the order in which writes changed
// the image: a write the kernel saw completed before it issued the next
// request is logged before that request.
type image struct {
	mu      sync.RWMutex
	data    []byte
	logging bool
	entries []Entry
	pos     atomic.Int64
}

func newImage(size int64) *image { return &image{data: make([]byte, size)} }

func (im *image) readAt(p []byte, off int64) {
	im.mu.RLock()
	copy(p, im.data[off:])
	im.mu.RUnlock()
}

func (im *image) writeAt(p []byte, off int64) {
	im.mu.Lock()
	copy(im.data[off:], p)
	if im.logging {
		// The FUSE server reuses p after we return.
		d := make([]byte, len(p))
		copy(d, p)
		im.entries = append(im.entries, Entry{Kind: Write, Pos: im.pos.Load(), Off: off, Data: d})
	}
	im.mu.Unlock()
}

func (im *image) flush(datasync bool) {
	im.mu.Lock()
	if im.logging {
		im.entries = append(im.entries, Entry{Kind: Flush, Pos: im.pos.Load(), Datasync: datasync})
	}
	im.mu.Unlock()
}

// startLogging snapshots the base image and turns logging on atomically
// with respect to writes, so every write is either in the base or in the log.
func (im *image) startLogging() []byte {
	im.mu.Lock()
	defer im.mu.Unlock()
	base := make([]byte, len(im.data))
	copy(base, im.data)
	im.logging = true
	im.entries = nil
	return base
}

// snapshotEntries returns the entries so far. Entries are never modified
// after being appended, so sharing their data is safe.
func (im *image) snapshotEntries() []Entry {
	im.mu.RLock()
	defer im.mu.RUnlock()
	return append([]Entry(nil), im.entries...)
}

func (im *image) stopLogging() {
	im.mu.Lock()
	im.logging = false
	im.mu.Unlock()
}
