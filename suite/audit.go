package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
)

// Audit tries every applicable anomaly of the catalogue at each distinct
// call site of one recording of a program it knows nothing about, plus
// the crash check.
type Audit struct {
	Program Program
	// Anomalies are the catalogue names to try; nil means
	// DefaultAuditAnomalies.
	Anomalies []string
	NoCrash   bool
	Crash     CrashOptions
	// Out is the directory the recording is saved in (as trace.strace),
	// so the reproduction commands can name it; "" keeps it in memory
	// only and the commands name "TRACE".
	Out string
	// Runner runs the checks (Engine, Jobs, Shard, Progress; Only and
	// Reproduce are not used).
	Runner Runner
}

// notByDefault are the entries an audit leaves out unless asked: their
// effect shows only after a power loss or a kill, which the crash check
// judges (a replay of either would report every site "unhandled" or
// "crashed" and say nothing).
var notByDefault = map[string]string{
	"fsync-lies": "judged by the crash check",
	"kill":       "judged by the crash check",
}

// DefaultAuditAnomalies is every catalogue entry but those whose effect
// only the crash check can judge.
func DefaultAuditAnomalies() []string {
	var out []string
	for _, a := range anomalies.All() {
		if _, skip := notByDefault[a.Name]; !skip {
			out = append(out, a.Name)
		}
	}
	return out
}

// LookupAnomalies resolves catalogue names; an unknown one is an error
// listing the close names.
func LookupAnomalies(names []string) ([]*anomalies.Anomaly, error) {
	var out []*anomalies.Anomaly
	var bad []string
	for _, n := range names {
		a, ok := anomalies.Lookup(n)
		if !ok {
			msg := fmt.Sprintf("no anomaly named %q", n)
			if s := anomalies.Suggest(n); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, ", ") + "?"
			}
			bad = append(bad, msg)
			continue
		}
		out = append(out, a)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s (list them with 'faultline anomalies')", strings.Join(bad, "; "))
	}
	return out, nil
}

// Plan lists the checks of an audit of the recording: each anomaly at
// each of its distinct sites (see Sites), in catalogue order, then the
// crash check.
func (a *Audit) Plan(t *mutators.Trace) ([]*Check, error) {
	names := a.Anomalies
	if names == nil {
		names = DefaultAuditAnomalies()
	}
	as, err := LookupAnomalies(names)
	if err != nil {
		return nil, err
	}
	var checks []*Check
	for _, an := range as {
		sites, err := Sites(t, an)
		if err != nil {
			return nil, err
		}
		for _, s := range sites {
			info := s.Info
			checks = append(checks, &Check{
				Name:    an.Name + " " + s.Selector.String(),
				Kind:    KindAnomaly,
				Anomaly: an.Name,
				Select:  []mutators.Selector{s.Selector},
				Site:    &info,
			})
		}
	}
	if !a.NoCrash {
		o := a.Crash
		if o.Amplify == "" {
			o.Amplify = "on"
		}
		checks = append(checks, &Check{Name: "crash", Kind: KindCrash, Crash: o})
	}
	return checks, nil
}

// Run records the program, saves the recording in Out, plans and runs the
// checks of this shard, and reports them in plan order; Report.Findings
// orders them by severity.
func (a *Audit) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	if a.Anomalies != nil {
		if _, err := LookupAnomalies(a.Anomalies); err != nil {
			return nil, err
		}
	}
	t, err := a.Runner.Engine.Record(ctx, &a.Program)
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", strings.Join(a.Program.Command, " "), err)
	}
	rep := &Report{Suite: "audit of " + strings.Join(a.Program.Command, " "), Command: a.Program.Command,
		Shard: a.Runner.Shard.String()}
	tracePath := "TRACE"
	if a.Out != "" {
		tracePath = filepath.Join(a.Out, "trace.strace")
		if err := blockrec.WriteFileAtomic(tracePath, t.Write); err != nil {
			return nil, fmt.Errorf("saving the recording: %w", err)
		}
		rep.Trace = tracePath
	}
	plan, err := a.Plan(t)
	if err != nil {
		return nil, err
	}
	var checks []*Check
	for _, c := range plan {
		if a.Runner.Shard.Has(c.Name) {
			checks = append(checks, c)
		}
	}
	rep.Results, err = a.Runner.RunChecks(ctx, &a.Program, t, checks, func(c *Check) string {
		return a.reproduce(tracePath, c)
	})
	rep.Elapsed = Duration(time.Since(start))
	return rep, err
}

// reproduce is the command line that repeats one check of the audit by
// hand: the mutation piped into a replay, or the crash check.
func (a *Audit) reproduce(trace string, c *Check) string {
	if c.Kind == KindCrash {
		return crashCommand(&a.Program, c.Crash)
	}
	var b strings.Builder
	b.WriteString("faultline mutate --anomaly " + c.Anomaly)
	for _, s := range c.Select {
		b.WriteString(" --select " + shellQuote(s.String()))
	}
	b.WriteString(" " + shellQuote(trace) + " | faultline replay -")
	return b.String()
}

// crashCommand is `faultline crash` with the program's world and options.
func crashCommand(p *Program, o CrashOptions) string {
	var b strings.Builder
	b.WriteString("faultline crash")
	if p.Init != "" {
		b.WriteString(" --init " + shellQuote(p.Init))
	}
	if p.Setup != "" {
		b.WriteString(" --setup " + shellQuote(p.Setup))
	}
	if p.User != "" {
		b.WriteString(" --user " + shellQuote(p.User))
	}
	fs := o.FS
	if fs == "" {
		fs = p.FS
	}
	if fs != "" {
		b.WriteString(" --fs " + fs)
	}
	if o.K > 0 {
		fmt.Fprintf(&b, " --k %d", o.K)
	}
	switch o.Amplify {
	case "off":
		b.WriteString(" --no-amplify")
	case "wide":
		b.WriteString(" --amplify=wide")
	}
	if o.Tolerance > 0 {
		fmt.Fprintf(&b, " --tolerance %d", o.Tolerance)
	}
	if o.KillPoints {
		b.WriteString(" --kill-points")
	}
	b.WriteString(" --")
	for _, w := range p.Command {
		b.WriteString(" " + shellQuote(w))
	}
	return b.String()
}

// WriteSuite saves what an audit ran as a suite file with the observed
// outcomes as the expected ones, so the audit becomes a regression test.
// Checks that could not run are left out (there is nothing to expect),
// and said so in a comment. Paths are written relative to the suite
// file's directory where they can be.
func (a *Audit) WriteSuite(path string, rep *Report) error {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return err
	}
	rel := func(p string) string {
		if p == "" {
			return ""
		}
		if r, err := filepath.Rel(dir, p); err == nil {
			return r
		}
		return p
	}
	m := fileModel{
		Name:    rep.Suite,
		Command: a.Program.Command,
		Env:     a.Program.Env,
		Sandbox: sandboxModel{Init: rel(a.Program.Init), Setup: a.Program.Setup, FS: a.Program.FS, User: a.Program.User},
	}
	if a.Program.Timeout > 0 {
		m.Timeout = a.Program.Timeout.String()
	}
	var skipped []string
	for _, res := range rep.Results {
		if res.Got == Error {
			skipped = append(skipped, res.Check)
			continue
		}
		switch res.Kind {
		case KindCrash:
			o := a.Crash
			m.Crash = &crashModel{Expect: string(res.Got), K: o.K, FS: o.FS, Amplify: o.Amplify, Tolerance: o.Tolerance, KillPoints: o.KillPoints}
		case KindAnomaly:
			am := anomalyModel{Name: res.Anomaly, Expect: string(res.Got)}
			if res.Site != nil {
				am.Select = []string{res.Site.Select}
			}
			m.Anomaly = append(m.Anomaly, am)
		}
	}
	return blockrec.WriteFileAtomic(path, func(w io.Writer) error {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Written by faultline audit on %s: the outcomes it observed, now expected.\n",
			time.Now().UTC().Format(time.RFC3339))
		fmt.Fprintf(&b, "# Run it with: faultline suite %s\n", filepath.Base(path))
		for _, s := range skipped {
			fmt.Fprintf(&b, "# left out, it could not run: %s\n", s)
		}
		b.WriteString("\n")
		enc := tomlEncoder(&b)
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("encoding the suite: %w", err)
		}
		_, err := w.Write(b.Bytes())
		return err
	})
}
