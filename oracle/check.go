package oracle

import (
	"fmt"
	"sort"

	"github.com/faultline/faultline/blockrec"
)

// DefaultTolerance is how many bytes may appear from nowhere before a
// crash state is called inconsistent (the C³ authors' code uses 32): file
// systems write small amounts of their own into files' last blocks.
const DefaultTolerance = 32

// Verdict is the judgement of one crash snapshot.
type Verdict struct {
	Consistent bool
	Distance   uint64    // d to the nearest expected snapshot
	Nearest    *Expected // the expected snapshot with the smallest d
	Files      []FileDiff
}

// FileDiff explains one file of the nearest expected snapshot against the
// crash state: what the user would find, and how many bytes are missing.
type FileDiff struct {
	Path         string `json:"path"`
	ExpectedSize int64  `json:"expected_size"` // -1 when the expected snapshot has no such file
	CrashSize    int64  `json:"crash_size"`    // -1 when the file is absent from the crash state
	Missing      uint64 `json:"missing_bytes"`
	Note         string `json:"note"` // "absent", "shorter", "different content", "unreadable: ...", "not in the expected snapshot"
}

func (f FileDiff) String() string {
	if f.ExpectedSize < 0 {
		return fmt.Sprintf("%s: %d bytes, %s", f.Path, f.CrashSize, f.Note)
	}
	if f.CrashSize < 0 {
		return fmt.Sprintf("%s: absent (expected %d bytes)", f.Path, f.ExpectedSize)
	}
	return fmt.Sprintf("%s: %s, %d bytes instead of %d, %d bytes missing", f.Path, f.Note, f.CrashSize, f.ExpectedSize, f.Missing)
}

// Check judges a crash snapshot against the expected snapshots: consistent
// when some expected snapshot is within tolerance. With no expected
// snapshot (the program never left anything on disk) every state is
// consistent.
func Check(cs *blockrec.Snapshot, es []*Expected, tolerance uint64) Verdict {
	have := HistogramOf(cs)
	v := Verdict{Consistent: len(es) == 0}
	for _, e := range es {
		d := have.Missing(e.Hist)
		if v.Nearest == nil || d < v.Distance {
			v.Nearest, v.Distance = e, d
		}
		if d <= tolerance {
			v.Consistent = true
			v.Nearest, v.Distance = e, d
			break
		}
	}
	if !v.Consistent && v.Nearest != nil {
		v.Files = explain(cs, v.Nearest.Snapshot)
	}
	return v
}

// explain lists the files of the expected snapshot that the crash state
// does not hold intact, biggest loss first; a file is matched by path
// (the histogram check itself allows renames, the explanation is for the
// user).
func explain(cs, es *blockrec.Snapshot) []FileDiff {
	var out []FileDiff
	for _, want := range es.Nodes {
		if want.Type != blockrec.TypeFile {
			continue
		}
		got := cs.Lookup(want.Path)
		switch {
		case got == nil || got.Type != blockrec.TypeFile:
			out = append(out, FileDiff{Path: want.Path, ExpectedSize: want.Size, CrashSize: -1,
				Missing: Histogram(want.Hist).Total(), Note: "absent"})
		case got.Err != "":
			out = append(out, FileDiff{Path: want.Path, ExpectedSize: want.Size, CrashSize: got.Size,
				Missing: Histogram(got.Hist).Missing(want.Hist), Note: "unreadable: " + got.Err})
		case got.SHA256 != want.SHA256:
			note := "different content"
			switch {
			case got.Size > 0 && Histogram(got.Hist)[0] == uint64(got.Size):
				// Allocated but never written, or written but not yet
				// marked written (ext4's unwritten extents).
				note = "all zero bytes"
			case got.Size < want.Size:
				note = "shorter"
			}
			out = append(out, FileDiff{Path: want.Path, ExpectedSize: want.Size, CrashSize: got.Size,
				Missing: Histogram(got.Hist).Missing(want.Hist), Note: note})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Missing > out[j].Missing })
	return out
}
