package oracle

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// Verdicts of a whole run.
const (
	Consistent   = "consistent"
	Inconsistent = "inconsistent"
)

// Report is the outcome of a crash-consistency check of one program run:
// what was checked, how long it took, and the findings grouped by cause.
type Report struct {
	Verdict string   `json:"verdict"`
	Command []string `json:"command"`
	FS      string   `json:"fs"`
	K       int      `json:"k"`
	// Amplification is "off", "sync+commit points" or "wide sync+commit
	// points".
	Amplification string `json:"amplification"`
	Tolerance     uint64 `json:"tolerance"`

	ExpectedSnapshots int `json:"expected_snapshots"`
	// CrashSites counts the power-loss sites checked; KillPoints the kill
	// points judged (0 unless asked for).
	CrashSites        int `json:"crash_sites"`
	KillPoints        int `json:"kill_points"`
	InconsistentSites int `json:"inconsistent_sites"`
	// UnmountableSites counts crash images that could not be mounted (each
	// is also an inconsistent site).
	UnmountableSites int `json:"unmountable_sites"`
	// LogWrites, LogFlushes and LogBytes describe the recorded block log.
	LogWrites  int   `json:"log_writes"`
	LogFlushes int   `json:"log_flushes"`
	LogBytes   int64 `json:"log_bytes"`

	ElapsedSeconds float64            `json:"elapsed_seconds"`
	Stages         map[string]float64 `json:"stage_seconds"`
	// ProgramExit is how the profiled program ended ("exited with 0").
	ProgramExit string `json:"program_exit"`
	// Trace is the amplified trace the crash sites' lines refer to, when
	// saved.
	Trace string `json:"trace,omitempty"`
	// Findings has one entry per group: the representative finding with
	// the ids of every site that shares its cause.
	Findings []GroupedFinding `json:"findings"`
	// Notes are remarks for the reader (why a check was skipped).
	Notes []string `json:"notes,omitempty"`
}

// GroupedFinding is a group's representative finding with the group's
// members.
type GroupedFinding struct {
	Finding
	Sites []int `json:"sites"`
}

// SetGroups fills Findings and the verdict from grouped findings.
func (r *Report) SetGroups(gs []Group, inconsistent int) {
	r.Findings = r.Findings[:0]
	for _, g := range gs {
		f := g.Finding
		// JSON readers get lists, never null.
		if f.DroppedWrites == nil {
			f.DroppedWrites = []DroppedWrite{}
		}
		if f.Files == nil {
			f.Files = []FileDiff{}
		}
		r.Findings = append(r.Findings, GroupedFinding{Finding: f, Sites: g.Sites})
	}
	r.InconsistentSites = inconsistent
	r.Verdict = Consistent
	if inconsistent > 0 {
		r.Verdict = Inconsistent
	}
}

// WriteJSON prints the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Findings == nil {
		r.Findings = []GroupedFinding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText prints the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "faultline crash: %s\n", strings.Join(r.Command, " "))
	fmt.Fprintf(&b, "  file system %s, k=%d, amplification %s, tolerance %d bytes\n", r.FS, r.K, r.Amplification, r.Tolerance)
	fmt.Fprintf(&b, "  program %s; %d expected snapshots; block log: %s writes (%s), %s flushes\n",
		r.ProgramExit, r.ExpectedSnapshots, humanize.Comma(int64(r.LogWrites)), humanize.IBytes(uint64(r.LogBytes)), humanize.Comma(int64(r.LogFlushes)))
	fmt.Fprintf(&b, "  checked %s crash sites", humanize.Comma(int64(r.CrashSites)))
	if r.KillPoints > 0 {
		fmt.Fprintf(&b, " and %s", plural(r.KillPoints, "kill point"))
	}
	fmt.Fprintf(&b, " in %s\n", humanDuration(r.ElapsedSeconds))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	if r.Verdict == Consistent {
		fmt.Fprintf(&b, "\nverdict: consistent: every crash state can be recovered to a state the program left on purpose\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "\nverdict: INCONSISTENT: %d of %d crash states lose data", r.InconsistentSites, r.CrashSites+r.KillPoints)
	if r.UnmountableSites > 0 {
		fmt.Fprintf(&b, " (%d cannot even be mounted)", r.UnmountableSites)
	}
	fmt.Fprintf(&b, ", %s\n", plural(len(r.Findings), "distinct cause"))
	for i, f := range r.Findings {
		b.WriteString("\n")
		writeFinding(&b, i+1, f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFinding(b *strings.Builder, n int, g GroupedFinding) {
	f := g.Finding
	where, follows := "power loss after", "crash follows"
	if f.Kind == Kill {
		where, follows = "SIGKILL before", "killed before"
	}
	fmt.Fprintf(b, "finding %d: %s line %d", n, where, f.Line)
	if len(g.Sites) > 1 {
		fmt.Fprintf(b, " (%d crash states, representative: site %d)", len(g.Sites), f.Site)
	} else {
		fmt.Fprintf(b, " (site %d)", f.Site)
	}
	b.WriteString("\n")
	if f.LineText != "" {
		fmt.Fprintf(b, "  %s: %s\n", follows, f.LineText)
	}
	if f.MountError != "" {
		fmt.Fprintf(b, "  the crash image cannot be mounted: %s\n", f.MountError)
	}
	if f.Kind == PowerLoss {
		if len(f.DroppedWrites) == 0 {
			fmt.Fprintf(b, "  writes dropped: none (the disk exactly as the log had it at this point)\n")
		} else {
			fmt.Fprintf(b, "  writes dropped (%d):\n", len(f.DroppedWrites))
			for _, d := range f.DroppedWrites {
				files := "?"
				if len(d.Files) > 0 {
					files = strings.Join(d.Files, ", ")
				}
				fmt.Fprintf(b, "    log entry %d: %s at offset %s, issued during line %d: %s\n",
					d.Entry, humanize.IBytes(uint64(d.Length)), humanize.Comma(d.Offset), d.Line, files)
			}
		}
	}
	fmt.Fprintf(b, "  nearest expected snapshot: %s (line %d), d = %s bytes that would have to appear from nowhere\n",
		f.Nearest, f.NearestLine, humanize.Comma(int64(f.Distance)))
	if len(f.Files) > 0 {
		fmt.Fprintf(b, "  %-32s %14s %14s %14s\n", "file", "crash state", "expected", "missing")
		for _, d := range f.Files {
			fmt.Fprintf(b, "  %-32s %14s %14s %14s  %s\n", d.Path, size(d.CrashSize), size(d.ExpectedSize), humanize.Comma(int64(d.Missing)), d.Note)
		}
	}
	for _, p := range f.Pending {
		if p.OnDisk {
			fmt.Fprintf(b, "  %s: its data (%s) was on disk since line %d, but the crash state cannot read it: the metadata that makes it readable was not committed yet\n", p.Path, humanize.IBytes(uint64(p.Bytes)), p.Line)
			continue
		}
		if p.Line > 0 {
			fmt.Fprintf(b, "  %s: its data (%s) reached the disk only later, at line %d\n", p.Path, humanize.IBytes(uint64(p.Bytes)), p.Line)
		} else {
			fmt.Fprintf(b, "  %s: its data (%s) reached the disk only at the final sync\n", p.Path, humanize.IBytes(uint64(p.Bytes)))
		}
	}
	if f.Kind == PowerLoss {
		fmt.Fprintf(b, "  also without amplification: %s\n", f.Unamplified)
	}
	if a := f.Artifacts; a != nil {
		fmt.Fprintf(b, "  artifacts: %s\n", a.Dir)
		fmt.Fprintf(b, "    trace with the crash point marked: %s\n", a.Trace)
		if a.Image != "" {
			fmt.Fprintf(b, "    crash image: %s\n", a.Image)
		}
		if a.Mount != "" {
			fmt.Fprintf(b, "    inspect: %s\n", a.Mount)
		}
	}
}

func size(n int64) string {
	if n < 0 {
		return "-"
	}
	return humanize.Comma(n) + " B"
}

func humanDuration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
