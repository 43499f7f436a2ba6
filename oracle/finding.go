package oracle

import (
	"sort"

	"github.com/faultline/faultline/blockrec"
)

// Kinds of crash a finding comes from.
const (
	PowerLoss = "power-loss" // a crash image built from the block log
	Kill      = "kill"       // the program SIGKILLed, the machine still up
)

// Answers to "does it also appear without amplification".
const (
	AlsoUnamplified = "yes"
	OnlyAmplified   = "no: only with amplification"
	NotChecked      = "not checked"
)

// Finding is one crash state a user could not recover from, with what is
// needed to understand and reproduce it.
type Finding struct {
	Kind string `json:"kind"` // PowerLoss or Kill
	Site int    `json:"site"` // blockrec.Site.ID, or the kill point's index
	// Line is the trace line the crash follows (1-based in the trace the
	// artifacts hold; 0 before the first line) and LineText that line.
	Line     int64  `json:"line"`
	LineText string `json:"line_text,omitempty"`
	Epoch    int    `json:"epoch"`
	// DroppedWrites are the in-flight writes the crash lost.
	DroppedWrites []DroppedWrite `json:"dropped_writes"`
	// Distance is d to the nearest expected snapshot, which Nearest and
	// NearestLine name.
	Distance    uint64 `json:"distance"`
	Nearest     string `json:"nearest_expected"`
	NearestLine int64  `json:"nearest_expected_line"`
	// Files puts the crash state's files beside the nearest expected
	// snapshot's, worst first.
	Files []FileDiff `json:"files"`
	// Pending names files whose data the crash state lacks and says where
	// in the trace it reached the disk later, when that can be told.
	Pending []PendingData `json:"pending_data,omitempty"`
	// MountError is set when the crash image could not even be mounted:
	// the whole file system is lost, which is a finding of its own.
	MountError  string `json:"mount_error,omitempty"`
	Unamplified string `json:"also_without_amplification"`
	// Artifacts is filled in when the finding's group gets an artifacts
	// directory.
	Artifacts *Artifacts `json:"artifacts,omitempty"`
}

// DroppedWrite is one write a crash site dropped.
type DroppedWrite struct {
	Entry  int   `json:"entry"` // index in the block log
	Offset int64 `json:"offset"`
	Length int   `json:"length"`
	// Line is the trace line that was running when the write arrived.
	Line int64 `json:"line"`
	// Files are what the written blocks belong to ("/data", "(journal)"),
	// empty when that cannot be told (file systems other than ext4).
	Files []string `json:"files,omitempty"`
}

// PendingData says where a damaged file's data was at the crash: not on
// disk yet (and when it got there), or on disk but not reachable.
type PendingData struct {
	Path string `json:"path"`
	// Line is the first trace line after the crash point whose writes
	// carry the file's data; 0 when only the final unmount wrote it.
	Line  int64 `json:"line"`
	Bytes int64 `json:"bytes"`
	// OnDisk is set when the data had reached the disk before the crash
	// point (at Line) and the crash state still reads something else:
	// the metadata that makes it readable (ext4 marks an extent written
	// only after the write completes, in a later transaction) had not.
	OnDisk bool `json:"on_disk_but_unreadable,omitempty"`
}

// Artifacts is where a finding can be reproduced from.
type Artifacts struct {
	Dir   string `json:"dir"`
	Image string `json:"image,omitempty"`
	Trace string `json:"trace"`
	Mount string `json:"mount_command,omitempty"`
}

// NewFinding makes a finding from a verdict, filling in the files of the
// crash state beside the nearest expected snapshot. cs may be nil when the
// image could not be mounted.
func NewFinding(kind string, site int, cs *blockrec.Snapshot, v Verdict) Finding {
	f := Finding{Kind: kind, Site: site, Distance: v.Distance, Unamplified: NotChecked}
	if v.Nearest != nil {
		f.Nearest, f.NearestLine = v.Nearest.Label, v.Nearest.Pos
	}
	f.Files = append(f.Files, v.Files...)
	if cs != nil && v.Nearest != nil {
		f.Files = append(f.Files, extraFiles(cs, v.Nearest.Snapshot)...)
	}
	return f
}

// extraFiles lists the crash state's files that the expected snapshot does
// not hold at all (an empty half-written output, a leftover temporary):
// often the clearest sign of what happened.
func extraFiles(cs, es *blockrec.Snapshot) []FileDiff {
	var out []FileDiff
	for _, n := range cs.Nodes {
		if n.Type != blockrec.TypeFile || es.Lookup(n.Path) != nil {
			continue
		}
		out = append(out, FileDiff{Path: n.Path, ExpectedSize: -1, CrashSize: n.Size, Note: "not in the expected snapshot"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// AffectedFiles are the paths a finding's explanation names, sorted: the
// files that lost bytes or are missing, and those that should not exist.
func (f *Finding) AffectedFiles() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range f.Files {
		if !seen[d.Path] {
			seen[d.Path] = true
			out = append(out, d.Path)
		}
	}
	sort.Strings(out)
	return out
}
