package suite

import (
	"fmt"
	"strings"
)

// Outcome is what a check observed: a replay's outcome class or a crash
// check's verdict, or Error when the check could not be done.
type Outcome string

// Replay outcomes (the replay contract in DESIGN.md).
const (
	Unhandled    Outcome = "unhandled"
	HandledError Outcome = "handled-error"
	Recovered    Outcome = "recovered"
	Crashed      Outcome = "crashed"
	Hung         Outcome = "hung"
)

// Crash-check verdicts.
const (
	Consistent   Outcome = "consistent"
	Inconsistent Outcome = "inconsistent"
)

// Error is a check that could not be done (the recording had no call the
// selector names, the replay found a different world, the disk could not
// be set up); its Result says why.
const Error Outcome = "error"

// Kind is what a check does.
type Kind string

const (
	KindAnomaly Kind = "anomaly" // a catalogue entry written into the recording and replayed
	KindPatch   Kind = "patch"   // a hand edit (unified diff) applied to the recording and replayed
	KindCrash   Kind = "crash"   // the crash-consistency check
)

// outcomesFor lists what a check of the kind can observe, for validating
// expectations.
func outcomesFor(k Kind) []Outcome {
	if k == KindCrash {
		return []Outcome{Consistent, Inconsistent}
	}
	return []Outcome{Unhandled, HandledError, Recovered, Crashed, Hung}
}

// parseOutcome validates an expected outcome for a kind of check.
func parseOutcome(k Kind, s string) (Outcome, error) {
	if s == "" {
		return "", fmt.Errorf("no expected outcome (want one of %s)", joinOutcomes(outcomesFor(k)))
	}
	for _, o := range outcomesFor(k) {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("%q is not an outcome of a %s check (want one of %s)", s, k, joinOutcomes(outcomesFor(k)))
}

func joinOutcomes(os []Outcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// Severity ranks an unexpected or notable outcome for an audit's findings,
// most serious first.
type Severity int

const (
	SevCrash     Severity = iota + 1 // the program crashed (killed by a signal it did not ask for)
	SevHang                          // it hung past the time limit
	SevDataLoss                      // a crash state a user cannot recover from, or a checker saw data lost
	SevUnhandled                     // the anomaly went unnoticed
	SevNone                          // handled: not a finding
)

func (s Severity) String() string {
	switch s {
	case SevCrash:
		return "crash"
	case SevHang:
		return "hang"
	case SevDataLoss:
		return "data loss"
	case SevUnhandled:
		return "unhandled"
	}
	return "ok"
}

// MarshalText makes severities read as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
