package oracle

import "github.com/faultline/faultline/blockrec"

// Histogram counts how often each byte value occurs across a snapshot's
// files.
type Histogram [256]uint64

// HistogramOf sums the files of a snapshot.
func HistogramOf(s *blockrec.Snapshot) Histogram { return Histogram(s.Histogram()) }

// Missing is d: how many bytes of want cannot be found in have, counted by
// value — the bytes that would have to appear from nowhere to turn have
// into want.
func (have Histogram) Missing(want Histogram) uint64 {
	var d uint64
	for b := range want {
		if want[b] > have[b] {
			d += want[b] - have[b]
		}
	}
	return d
}

// Total is the number of bytes counted.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, c := range h {
		n += c
	}
	return n
}
