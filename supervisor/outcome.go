package supervisor

import (
	"strconv"
	"time"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Outcome is how a replay ended (DESIGN.md, replay contract 6).
type Outcome string

const (
	// Unhandled: an anomaly was injected and the program carried on as
	// recorded.
	Unhandled Outcome = "unhandled"
	// HandledError: it diverged, then exited non-zero or wrote to stderr.
	HandledError Outcome = "handled-error"
	// Recovered: it diverged and completed successfully.
	Recovered Outcome = "recovered"
	// Crashed: it was killed by a signal.
	Crashed Outcome = "crashed"
	// Hung: it exceeded the time limit and was killed.
	Hung Outcome = "hung"
	// None: nothing was injected and the program did what the trace says
	// (an unedited trace, or one with only benign inserted flushes).
	None Outcome = "none"
)

// Handled reports whether the outcome means every injected anomaly was
// handled: what exit status 0 of `faultline replay` says.
func (r *Report) Handled() bool {
	switch r.Outcome {
	case Recovered, HandledError, None:
		return true
	case Crashed:
		// Killed where the trace says it was killed: the anomaly was the
		// kill, and it is the crash oracle's to judge what it left.
		return r.KilledAsInjected
	}
	return false
}

// report classifies the run and assembles the report.
func (e *engine) report(h *Header, argv []string, ws unix.WaitStatus, hung bool, timeout, elapsed time.Duration) *Report {
	rep := &Report{
		Trace:      e.r.Trace.File,
		Command:    argv,
		Anomaly:    h.Anomaly,
		Injections: e.injections,
		Adjusted:   e.adjusted,
		Notes:      e.notes,
		Divergence: e.div,
		Diverged:   e.div != nil,
		AfterTotal: e.afterTotal,
		After:      e.after,
		Elapsed:    elapsed,
		Anomalies:  e.anomalies,
		InTrace:    e.sc.anomaly,
		ExitStatus: -1,
		context:    e.sc.lines,
	}
	if rep.Injections == nil {
		rep.Injections = []Injection{}
	}
	switch {
	case ws.Exited():
		rep.ExitStatus = ws.ExitStatus()
	case ws.Signaled():
		rep.Signal = unix.SignalName(ws.Signal())
	}
	if hung {
		rep.Outcome = Hung
		rep.Notes = append(rep.Notes, "killed after "+timeout.String())
		return rep
	}
	if !rep.Diverged && rep.Signal == "" {
		// Lockstep to the end: the exit status must be the trace's too.
		if want, line, ok := e.rootExit(); ok && want != rep.ExitStatus {
			th := &thread{tid: 0, pid: e.sc.root}
			e.diverge(th, &event{line: line, exit: &parser.Exit{Status: strconv.Itoa(want)}}, "+++ exited with "+strconv.Itoa(rep.ExitStatus)+" +++", "a different exit status")
			rep.Divergence, rep.Diverged = e.div, true
		}
	}
	switch {
	case rep.Signal != "":
		rep.Outcome = Crashed
		rep.KilledAsInjected = e.killed
	case e.anomalies == 0 && !rep.Diverged:
		rep.Outcome = None
	case !rep.Diverged:
		rep.Outcome = Unhandled
	case rep.ExitStatus != 0 || e.stderrAfter:
		rep.Outcome = HandledError
	default:
		rep.Outcome = Recovered
	}
	return rep
}

// rootExit is the first process's exit status in the trace.
func (e *engine) rootExit() (int, int, bool) {
	for _, ev := range e.sc.threads[e.sc.root] {
		if ev.exit != nil && !ev.inserted && ev.exit.Status != "" {
			n, err := strconv.Atoi(ev.exit.Status)
			return n, ev.line, err == nil
		}
	}
	return 0, 0, false
}
