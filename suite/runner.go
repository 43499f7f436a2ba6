package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// Runner runs checks in parallel, each in its own sandbox (the Engine
// makes one per call).
type Runner struct {
	Engine Engine
	// Jobs is how many checks run at once; 0 means the number of CPUs.
	Jobs int
	// Shard keeps only this part of the checks (see Shard.Has).
	Shard Shard
	// Only, when not empty, keeps only the checks with these names.
	Only []string
	// Progress, if set, is called after each check, one call at a time.
	Progress func(r *Result, done, total int)
	// Reproduce builds the command that repeats one check; nil gives
	// `faultline suite FILE --run NAME`.
	Reproduce func(s *Suite, c *Check) string
}

// Run runs a suite's checks (those of the shard and of Only) and reports
// them in the suite's order. The error is for a suite that cannot run at
// all (the program could not be recorded, ctx was cancelled); a check
// that could not be done is a Result with Got == Error.
func (r *Runner) Run(ctx context.Context, s *Suite) (*Report, error) {
	start := time.Now()
	checks, err := r.pick(s.Checks)
	if err != nil {
		return nil, err
	}
	rep := &Report{Suite: s.Name, File: s.File, Command: s.Program.Command, Shard: r.Shard.String()}
	var trace *mutators.Trace
	if needsTrace(checks) {
		if trace, err = r.Recording(ctx, s); err != nil {
			return nil, err
		}
	}
	repro := r.Reproduce
	if repro == nil {
		repro = suiteReproduce
	}
	rep.Results, err = r.RunChecks(ctx, &s.Program, trace, checks, func(c *Check) string { return repro(s, c) })
	rep.Elapsed = Duration(time.Since(start))
	return rep, err
}

// pick applies Only and Shard.
func (r *Runner) pick(all []*Check) ([]*Check, error) {
	only := map[string]bool{}
	for _, n := range r.Only {
		only[n] = true
	}
	var out []*Check
	found := map[string]bool{}
	for _, c := range all {
		if len(only) > 0 && !only[c.Name] {
			continue
		}
		found[c.Name] = true
		if r.Shard.Has(c.Name) {
			out = append(out, c)
		}
	}
	var missing []string
	for _, n := range r.Only {
		if !found[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		names := make([]string, len(all))
		for i, c := range all {
			names[i] = c.Name
		}
		return nil, fmt.Errorf("no check named %s in the suite (it has: %s)",
			strings.Join(quoteAll(missing), ", "), strings.Join(quoteAll(names), ", "))
	}
	return out, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func needsTrace(cs []*Check) bool {
	for _, c := range cs {
		if c.Kind != KindCrash {
			return true
		}
	}
	return false
}

// Recording is what the suite's replays edit: its pinned trace, or a
// fresh recording. A patch file is a diff against it.
func (r *Runner) Recording(ctx context.Context, s *Suite) (*mutators.Trace, error) {
	if s.Trace != "" {
		f, err := os.Open(s.Trace)
		if err != nil {
			return nil, fmt.Errorf("reading the suite's trace: %w", err)
		}
		defer f.Close()
		return mutators.Read(s.Trace, f)
	}
	t, err := r.Engine.Record(ctx, &s.Program)
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", strings.Join(s.Program.Command, " "), err)
	}
	return t, nil
}

// RunChecks runs the checks against one recording (nil when none of them
// replays), at most Jobs at once, and returns their results in order.
// Only and Shard are not applied here: Run and Audit apply them. On
// cancellation the checks under way are stopped (the Engine cleans up
// their sandboxes), those not started are left out, and the error is
// ctx's.
func (r *Runner) RunChecks(ctx context.Context, p *Program, trace *mutators.Trace, checks []*Check, repro func(*Check) string) ([]*Result, error) {
	jobs := r.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	results := make([]*Result, len(checks))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, jobs)
	for i, c := range checks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := r.one(ctx, p, trace, c)
			if repro != nil {
				res.Reproduce = repro(c)
			}
			mu.Lock()
			defer mu.Unlock()
			results[i] = res
			done++
			if r.Progress != nil && ctx.Err() == nil {
				r.Progress(res, done, len(checks))
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		kept := results[:0]
		for _, res := range results {
			if res != nil && res.Got != Error {
				kept = append(kept, res)
			}
		}
		return kept, fmt.Errorf("interrupted after %d of %d checks: %w", len(kept), len(checks), err)
	}
	return results, nil
}

// one runs a check; whatever goes wrong becomes its result.
func (r *Runner) one(ctx context.Context, p *Program, trace *mutators.Trace, c *Check) *Result {
	start := time.Now()
	res := &Result{Check: c.Name, Kind: c.Kind, Anomaly: c.Anomaly, Expect: c.Expect, Site: c.Site}
	var findings []anomalies.Finding
	err := func() error {
		switch c.Kind {
		case KindCrash:
			cr, err := r.Engine.Crash(ctx, p, c.Crash)
			if err != nil {
				return err
			}
			res.Got = cr.Verdict
			res.Detail = fmt.Sprintf("%d of %d crash states inconsistent", cr.Inconsistent, cr.Sites)
			for _, n := range cr.Notes {
				res.Detail += "\nnote: " + n
			}
			res.Findings = cr.Findings
			res.Artifacts = cr.Report
			return nil
		case KindAnomaly, KindPatch:
			edited, a, err := edit(trace, c)
			if err != nil {
				return err
			}
			rr, err := r.Engine.Replay(ctx, p, edited, a, c.Name)
			if err != nil {
				return err
			}
			res.Got = rr.Outcome
			res.Detail = rr.Divergence
			findings = rr.Findings
			for _, f := range rr.Findings {
				res.Findings = append(res.Findings, f.String())
			}
			res.Artifacts = rr.Report
			return nil
		}
		return fmt.Errorf("unknown kind of check %q", c.Kind)
	}()
	res.Elapsed = Duration(time.Since(start))
	if err != nil {
		res.Got = Error
		res.Detail = err.Error()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			res.Detail = "interrupted"
		}
		res.Severity = SevNone
		return res
	}
	res.Severity = severity(res.Got, findings)
	res.OK = c.Expect == "" || res.Got == c.Expect
	return res
}

// edit writes the check's anomaly or patch into the recording.
func edit(trace *mutators.Trace, c *Check) (*mutators.Trace, *anomalies.Anomaly, error) {
	if trace == nil {
		return nil, nil, fmt.Errorf("no recording to edit")
	}
	if c.Kind == KindPatch {
		data, err := os.ReadFile(c.Patch)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the patch: %w", err)
		}
		t, err := ApplyPatch(c.Patch, data, trace)
		return t, nil, err
	}
	a, ok := anomalies.Lookup(c.Anomaly)
	if !ok {
		return nil, nil, fmt.Errorf("no anomaly named %q", c.Anomaly)
	}
	t, err := a.Apply(trace, c.Select...)
	if err != nil {
		return nil, nil, fmt.Errorf("writing the anomaly into the recording: %w", err)
	}
	return t, a, nil
}

// suiteReproduce repeats one check of a suite file.
func suiteReproduce(s *Suite, c *Check) string {
	return "faultline suite " + shellQuote(s.File) + " --run " + shellQuote(c.Name)
}

// shellQuote quotes a word for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
