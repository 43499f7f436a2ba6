package suite

import (
	"strconv"
	"time"

	"github.com/faultline/faultline/anomalies"
)

// Result is one check's outcome.
type Result struct {
	Check     string    `json:"check"`
	Kind      Kind      `json:"kind"`
	Anomaly   string    `json:"anomaly,omitempty"`
	Expect    Outcome   `json:"expected,omitempty"`
	Got       Outcome   `json:"got"`
	OK        bool      `json:"ok"` // got what was expected (an audit expects nothing: always true unless Error)
	Severity  Severity  `json:"severity"`
	Elapsed   Duration  `json:"elapsed_seconds"`
	Detail    string    `json:"detail,omitempty"` // why it could not run, where it diverged, the crash summary
	Findings  []string  `json:"findings,omitempty"`
	Site      *SiteInfo `json:"site,omitempty"`
	Reproduce string    `json:"reproduce"`
	Artifacts string    `json:"artifacts,omitempty"` // the replay's or crash check's saved report
}

// Duration prints as seconds in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(formatSeconds(time.Duration(d))), nil
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// severity ranks what a check observed.
func severity(got Outcome, findings []anomalies.Finding) Severity {
	switch got {
	case Crashed:
		return SevCrash
	case Hung:
		return SevHang
	case Inconsistent:
		return SevDataLoss
	}
	if anomalies.Failed(findings) {
		return SevDataLoss
	}
	if got == Unhandled {
		return SevUnhandled
	}
	return SevNone
}
