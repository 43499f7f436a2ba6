package suite

import (
	"context"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// Engine records, replays and crash-checks a program for the runner. Each
// call sets up its own sandbox and removes it before returning, so calls
// may run in parallel. Faultline is the real one (package supervisor and
// package crash); tests may give their own.
type Engine interface {
	// Record runs the program once in a fresh sandbox and returns its
	// trace (followed into children, with -y paths).
	Record(ctx context.Context, p *Program) (*mutators.Trace, error)
	// Replay runs the program against an edited trace in a fresh sandbox.
	// a is the anomaly written into it, for its checkers; nil for a hand
	// edit. name is the check's, for naming its artifacts.
	Replay(ctx context.Context, p *Program, t *mutators.Trace, a *anomalies.Anomaly, name string) (*ReplayResult, error)
	// Crash runs the crash-consistency check.
	Crash(ctx context.Context, p *Program, o CrashOptions) (*CrashResult, error)
}

// ReplayResult is what the runner needs from a replay.
type ReplayResult struct {
	Outcome    Outcome // one of the replay outcomes
	Divergence string  // where the program left the trace, one line; "" if it did not
	Findings   []anomalies.Finding
	Report     string // where the replay saved its full report, or ""
}

// CrashResult is what the runner needs from a crash check.
type CrashResult struct {
	Verdict      Outcome // Consistent or Inconsistent
	Sites        int     // crash states checked
	Inconsistent int     // of those, inconsistent
	Findings     []string
	Report       string   // where the check saved its report and artifacts, or ""
	Notes        []string // the check's remarks: a run that differed, writeback it did not cause
}
