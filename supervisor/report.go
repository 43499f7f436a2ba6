package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// Report is what a replay found.
type Report struct {
	Trace   string   `json:"trace"`
	Command []string `json:"command"`
	// Anomaly names the catalogue entry the trace's edits come from
	// ("# anomaly:" header, or recognised from the edited lines).
	Anomaly string `json:"anomaly,omitempty"`

	Outcome    Outcome     `json:"outcome"`
	Diverged   bool        `json:"diverged"`
	Divergence *Divergence `json:"divergence"`
	// Injections are the edited and inserted lines performed, in order.
	Injections []Injection `json:"injections"`
	// Adjusted are unedited lines whose live results were patched to
	// agree with the trace.
	Adjusted []Injection         `json:"adjusted,omitempty"`
	Findings []anomalies.Finding `json:"findings"`
	Notes    []string            `json:"notes,omitempty"`

	ExitStatus       int    `json:"exit_status"`      // -1 when killed
	Signal           string `json:"signal,omitempty"` // the signal that killed it
	KilledAsInjected bool   `json:"killed_as_injected,omitempty"`

	Anomalies int `json:"anomalies_performed"` // anomaly lines performed
	InTrace   int `json:"anomalies_in_trace"`  // anomaly lines the trace has

	// After is what the program did after diverging (the first lines of
	// it; AfterTotal counts them all).
	After      []string      `json:"after,omitempty"`
	AfterTotal int           `json:"after_total"`
	Elapsed    time.Duration `json:"elapsed_ns"`

	// Replayed is the replayed trace; Artifacts names where it was saved.
	Replayed  []byte   `json:"-"`
	Artifacts []string `json:"artifacts,omitempty"`

	context []*parser.Line
}

// Divergence is where lockstep ended.
type Divergence struct {
	Line     int    `json:"line"`     // the trace's line
	Pid      int    `json:"pid"`      // the trace's pid of the thread
	Tid      int    `json:"tid"`      // the live thread
	Expected string `json:"expected"` // the trace's line
	Actual   string `json:"actual"`   // what the program did
	Reason   string `json:"reason"`
}

// Injection is one performed edit or inserted line.
type Injection struct {
	Line    int      `json:"line"`
	Kind    string   `json:"kind"` // fail, not-performed, result, inserted, kill, agree
	Call    string   `json:"call"`
	Changes []string `json:"changes,omitempty"`
}

// ExitCode is faultline replay's exit status for the report: 0 handled,
// 1 not.
func (r *Report) ExitCode() int {
	if r.Handled() {
		return 0
	}
	return 1
}

// runChecks runs the anomaly's checkers on the replayed trace.
func (r *Report) runChecks(h *Header, t *mutators.Trace) {
	r.Findings = []anomalies.Finding{}
	a := r.recognise(t)
	if a == nil {
		return
	}
	r.Anomaly = a.Name
	if len(a.Checks) == 0 || len(r.Replayed) == 0 {
		return
	}
	rt, err := mutators.Read(r.Trace+".replay", strings.NewReader(string(r.Replayed)))
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("replayed trace does not parse, checks skipped: %v", err))
		return
	}
	r.Findings = append(r.Findings, a.Check(rt.Lines)...)
}

// recognise finds the anomaly: the header's, or the catalogue entry whose
// name is "<call>-<errno>" for an edited line ("rename-exdev").
func (r *Report) recognise(t *mutators.Trace) *anomalies.Anomaly {
	if r.Anomaly != "" {
		if a, ok := anomalies.Lookup(r.Anomaly); ok {
			return a
		}
		r.Notes = append(r.Notes, fmt.Sprintf("header names anomaly %q, which the catalogue does not have", r.Anomaly))
		return nil
	}
	for _, in := range r.Injections {
		if in.Kind == "kill" {
			if a, ok := anomalies.Lookup("kill"); ok {
				return a
			}
		}
		l, err := parser.ParseLine("", 0, in.Call)
		if err != nil {
			continue
		}
		c, ok := l.Body.(*parser.Call)
		if !ok || c.Result == nil || !c.Result.Failed() {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(c.Name, "new"), "at")
		if c.Name == "renameat2" {
			name = "rename"
		}
		for _, a := range anomalies.All() {
			if a.Name == name+"-"+strings.ToLower(c.Result.Outcome.Errno) || a.Name == c.Name+"-"+strings.ToLower(c.Result.Outcome.Errno) {
				return a
			}
		}
	}
	return nil
}

// JSON writes the report as one JSON object.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Text writes the report for a person.
func (r *Report) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replay of %s: %s\n", r.Trace, r.Outcome)
	if r.Anomaly != "" {
		fmt.Fprintf(&b, "anomaly: %s\n", r.Anomaly)
	}
	fmt.Fprintf(&b, "command: %s\n", strings.Join(r.Command, " "))
	switch {
	case r.Signal != "":
		fmt.Fprintf(&b, "program: killed by %s", r.Signal)
		if r.KilledAsInjected {
			b.WriteString(" (as the trace says)")
		}
		b.WriteString("\n")
	case r.Outcome != Hung:
		fmt.Fprintf(&b, "program: exited with %d\n", r.ExitStatus)
	}
	fmt.Fprintf(&b, "\ninjections (%d):\n", len(r.Injections))
	if len(r.Injections) == 0 {
		b.WriteString("  none\n")
	}
	for _, in := range r.Injections {
		fmt.Fprintf(&b, "  line %d [%s] %s\n", in.Line, in.Kind, in.Call)
		for _, c := range in.Changes {
			fmt.Fprintf(&b, "      %s\n", c)
		}
	}
	if len(r.Adjusted) > 0 {
		fmt.Fprintf(&b, "\nunedited lines made to agree with the trace: %d\n", len(r.Adjusted))
	}
	if d := r.Divergence; d != nil {
		fmt.Fprintf(&b, "\ndiverged at line %d (pid %d in the trace, tid %d): %s\n", d.Line, d.Pid, d.Tid, d.Reason)
		r.writeContext(&b, d.Line)
		fmt.Fprintf(&b, "  expected: %s\n", d.Expected)
		fmt.Fprintf(&b, "  actual:   %s\n", d.Actual)
		if len(r.After) > 0 {
			fmt.Fprintf(&b, "\nafter diverging the program did (%d lines", r.AfterTotal)
			n := min(len(r.After), 12)
			if n < r.AfterTotal {
				fmt.Fprintf(&b, ", first %d", n)
			}
			b.WriteString("):\n")
			for _, l := range r.After[:n] {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	} else {
		b.WriteString("\nno divergence: the program made every call the trace has\n")
	}
	fmt.Fprintf(&b, "\nfindings (%d):\n", len(r.Findings))
	if len(r.Findings) == 0 {
		b.WriteString("  none\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, a := range r.Artifacts {
		fmt.Fprintf(&b, "saved: %s\n", a)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeContext prints the trace's lines around line n.
func (r *Report) writeContext(b *strings.Builder, n int) {
	if n <= 0 {
		return
	}
	for _, l := range r.context {
		if l.Pos.Line >= n-3 && l.Pos.Line <= n+3 {
			mark := "   "
			if l.Pos.Line == n {
				mark = ">> "
			}
			fmt.Fprintf(b, "  %s%5d  %s\n", mark, l.Pos.Line, l.String())
		}
	}
}

// Save writes the replayed trace and the JSON report next to the trace
// file (TRACE.replay.strace, TRACE.replay.json), atomically.
func (r *Report) Save(base string) error {
	st := base + ".replay.strace"
	js := base + ".replay.json"
	r.Artifacts = []string{st, js}
	if err := blockrec.WriteFileAtomic(st, func(w io.Writer) error { _, err := w.Write(r.Replayed); return err }); err != nil {
		return fmt.Errorf("saving the replayed trace: %w", err)
	}
	if err := blockrec.WriteFileAtomic(js, r.JSON); err != nil {
		return fmt.Errorf("saving the report: %w", err)
	}
	return nil
}
