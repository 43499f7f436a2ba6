package blockrec

// Epoch is a maximal run of writes between two flushes. Everything before
// the flush that opens it is on disk whatever happens; any subset of its own
// writes may be (C³ section 3.2).
type Epoch struct {
	// Index counts the flushes before the epoch, matching the epoch column
	// of WriteLogText.
	Index int
	// Start and End delimit the epoch's entries [Start, End) in Log.Entries;
	// all are writes. Entries[End] is the closing flush unless End is the
	// end of the log (the run ended with requests still in flight).
	Start, End int
}

// Epochs splits the log at flushes. Epochs without writes (back-to-back
// flushes) are left out: their only crash state is the one before them.
func Epochs(l *Log) []Epoch {
	var eps []Epoch
	idx, start := 0, 0
	for i, e := range l.Entries {
		if e.Kind != Flush {
			continue
		}
		if i > start {
			eps = append(eps, Epoch{Index: idx, Start: start, End: i})
		}
		idx++
		start = i + 1
	}
	if start < len(l.Entries) {
		eps = append(eps, Epoch{Index: idx, Start: start, End: len(l.Entries)})
	}
	return eps
}
