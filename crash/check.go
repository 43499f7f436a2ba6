package crash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
)

// Amplify selects test amplification.
type Amplify string

const (
	// AmplifyOn (the default; "" means it too) inserts C³'s sync points
	// after calls that may erase data and commit points after metadata
	// calls.
	AmplifyOn Amplify = "on"
	// AmplifyWide adds C³'s wider sync points: any open for writing,
	// unlink, writes over 512 bytes.
	AmplifyWide Amplify = "wide"
	// AmplifyOff replays the program's own trace.
	AmplifyOff Amplify = "off"
)

func (a Amplify) describe() string {
	switch a {
	case AmplifyOff:
		return "off"
	case AmplifyWide:
		return "wide sync points + commit points"
	}
	return "sync points + commit points"
}

// Stage names passed to Progress.
const (
	StageProfile = "profile"
	StageRecord  = "record"
	StageSites   = "crash sites"
	StageUnamp   = "crash sites without amplification"
	StageKill    = "kill points"
	StageExplain = "explain"
)

// Check is one crash-consistency check of a program run: configure the
// fields, call Run.
type Check struct {
	// Argv is the program and its arguments; it runs in the sandbox.
	Argv []string
	// Env is its environment; nil means faultline's.
	Env []string
	// Init is a directory whose contents are copied into the sandbox
	// before the program runs; Setup a shell command run there after.
	Init  string
	Setup string
	// FS is the sandbox's file system (ext4 if empty); Size its image size
	// (if zero, blockrec's default, or 128 MiB for btrfs, which refuses
	// anything under about 109 MiB).
	FS   blockrec.FSType
	Size int64
	// K is the most in-flight writes a crash site drops (blockrec.DefaultK
	// if zero).
	K int
	// Tolerance is the oracle's d threshold; TolSet says it was given (0
	// is a valid tolerance), else oracle.DefaultTolerance.
	Tolerance uint64
	TolSet    bool
	Amplify   Amplify
	// Unamplified runs the unamplified variant too when amplified sites
	// are inconsistent, so findings can say whether amplification was
	// needed.
	Unamplified bool
	// KillPoints also judges the state left when the program is SIGKILLed
	// before each metadata call.
	KillPoints bool
	// Out, when set, receives the artifacts and the report (report.json,
	// report.txt), written atomically.
	Out string
	// OwnReplay re-runs the program with this package's minimal live
	// replay (calls matched by process and order, inserted lines performed
	// from faultline's side, the sandbox at a host path) instead of
	// supervisor.Replay (lockstep, results forced, inserted lines performed
	// in the program's context, a private mount namespace).
	OwnReplay bool
	// Workers checks that many crash images at once (blockrec default if 0).
	Workers int
	// Timeout bounds each run of the program (60 s if zero).
	Timeout time.Duration
	// Progress is told how far each stage is.
	Progress func(stage string, done, total int)
	// Log receives remarks as the check goes; nil discards them.
	Log io.Writer
}

func (c *Check) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 60 * time.Second
}

func (c *Check) progress(stage string, done, total int) {
	if c.Progress != nil {
		c.Progress(stage, done, total)
	}
}

func (c *Check) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

func (c *Check) fs() blockrec.FSType {
	if c.FS == "" {
		return blockrec.Ext4
	}
	return c.FS
}

func (c *Check) size() int64 {
	if c.Size == 0 && c.fs() == blockrec.Btrfs {
		return 128 << 20
	}
	return c.Size
}

func (c *Check) k() int {
	if c.K == 0 {
		return blockrec.DefaultK
	}
	return c.K
}

func (c *Check) tolerance() uint64 {
	if c.TolSet {
		return c.Tolerance
	}
	return oracle.DefaultTolerance
}

// Run profiles the program, records it with amplification, checks every
// crash site and returns the report. An error means the check could not be
// done; a finding is not an error (Report.Verdict says it).
func (c *Check) Run(ctx context.Context) (rep *oracle.Report, err error) {
	t0 := time.Now()
	if len(c.Argv) == 0 {
		return nil, errors.New("crash: no program to run")
	}
	if c.Init != "" && c.Setup != "" {
		// Both are allowed: the directory first, then the command.
		c.logf("populating the sandbox from %s, then running %q", c.Init, c.Setup)
	}
	switch c.Amplify {
	case "", AmplifyOn, AmplifyWide, AmplifyOff:
	default:
		return nil, fmt.Errorf("crash: amplification %q: want on, wide or off", string(c.Amplify))
	}
	fs := c.fs()
	switch fs {
	case blockrec.Ext4, blockrec.XFS, blockrec.Btrfs:
	default:
		return nil, fmt.Errorf("crash: file system %q: want ext4, xfs or btrfs", fs)
	}
	if c.Out != "" {
		if err := os.MkdirAll(c.Out, 0o755); err != nil {
			return nil, fmt.Errorf("crash: --out %s: %w", c.Out, err)
		}
	}
	rep = &oracle.Report{
		Command: c.Argv, FS: string(fs), K: c.k(), Amplification: c.Amplify.describe(),
		Tolerance: c.tolerance(), Stages: map[string]float64{},
	}
	stage := func(name string, since time.Time) { rep.Stages[name] += time.Since(since).Seconds() }

	sb, err := newSandbox(ctx, c.Init, c.Setup)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	defer func() {
		if cerr := sb.close(); cerr != nil && err == nil {
			err = fmt.Errorf("crash: %w", cerr)
		}
	}()

	// 1. Profile: the program's own run, snapshotted after each metadata
	// call.
	t := time.Now()
	c.progress(StageProfile, 0, 1)
	if _, err := sb.mount(fs, c.size()); err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	prof, err := c.runProfile(ctx, sb)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	if err := sb.unmount(); err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	rep.ProgramExit = prof.status
	if prof.status != "exited with 0" {
		note := fmt.Sprintf("the program %s in the profiling run", prof.status)
		if prof.output != "" {
			note += "; it printed: " + prof.output
		}
		rep.Notes = append(rep.Notes, note)
	}
	stage(StageProfile, t)
	c.progress(StageProfile, 1, 1)

	// 2. Amplify the trace and record its replay.
	amplified, err := amplify(prof.trace, c.Amplify)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	es, err := prof.expectedSet(amplified)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	rep.ExpectedSnapshots = es.Len()
	art := &artifacts{dir: c.Out, trace: amplified}
	if c.Out != "" {
		if rep.Trace, err = art.writeTrace(); err != nil {
			return nil, fmt.Errorf("crash: %w", err)
		}
	}

	t = time.Now()
	c.progress(StageRecord, 0, 1)
	rec, err := c.record(ctx, sb, fs, amplified)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	if rec.status != prof.status {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the program %s in the profiling run but %s in the recording run", prof.status, rec.status))
	}
	if rec.divergence != "" {
		rep.Notes = append(rep.Notes, "the recording run diverged from the trace ("+rec.divergence+"); crash positions after that point are approximate")
	}
	rep.LogWrites, rep.LogFlushes, rep.LogBytes = rec.log.Stats()
	if bg := backgroundFlushes(rec.log, amplified); len(bg) > 0 {
		rep.Notes = append(rep.Notes, backgroundNote(bg, amplified))
	}
	if c.Out != "" {
		// `faultline blocklog` prints it.
		if err := blockrec.SaveLog(filepath.Join(c.Out, "block.log"), rec.log); err != nil {
			return nil, fmt.Errorf("crash: saving the block log: %w", err)
		}
	}
	stage(StageRecord, t)
	c.progress(StageRecord, 1, 1)

	// 3. Crash sites.
	t = time.Now()
	sc, err := c.checkSites(ctx, StageSites, rec.log, es)
	if err != nil {
		return nil, fmt.Errorf("crash: %w", err)
	}
	findings := sc.findings
	rep.CrashSites = sc.checked
	for _, f := range findings {
		if f.MountError != "" {
			rep.UnmountableSites++
		}
	}
	stage(StageSites, t)

	// 4. Explain: dropped writes to files, lines, pending data.
	t = time.Now()
	c.progress(StageExplain, 0, 1)
	ex := &explainer{log: rec.log, trace: amplified, work: sb.work, sites: sc.sites}
	if err := ex.explain(findings); errors.Is(err, blockrec.ErrNoFileMap) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("dropped writes are not mapped to files on %s (faultline reads only ext4's block maps)", fs))
	} else if err != nil {
		rep.Notes = append(rep.Notes, "could not map blocks to files: "+err.Error())
	}
	stage(StageExplain, t)
	c.progress(StageExplain, 1, 1)

	// 5. Without amplification, when it matters.
	if c.Amplify == AmplifyOff {
		for i := range findings {
			findings[i].Unamplified = oracle.AlsoUnamplified // it was off
		}
	} else if len(findings) > 0 && c.Unamplified {
		t = time.Now()
		plain, err := c.record(ctx, sb, fs, prof.trace)
		if err != nil {
			return nil, fmt.Errorf("crash: without amplification: %w", err)
		}
		pes, err := prof.expectedSet(prof.trace)
		if err != nil {
			return nil, fmt.Errorf("crash: %w", err)
		}
		pc, err := c.checkSites(ctx, StageUnamp, plain.log, pes)
		if err != nil {
			return nil, fmt.Errorf("crash: without amplification: %w", err)
		}
		markUnamplified(findings, pc.findings)
		stage(StageUnamp, t)
	}

	// 6. Kill points.
	if c.KillPoints {
		t = time.Now()
		kf, n, err := c.checkKillPoints(ctx, sb, fs, amplified, es)
		if err != nil {
			return nil, fmt.Errorf("crash: kill points: %w", err)
		}
		rep.KillPoints = n
		findings = append(findings, kf...)
		stage(StageKill, t)
	}

	groups := oracle.GroupFindings(findings)
	if c.Out != "" {
		for i := range groups {
			a, err := art.forGroup(i+1, &groups[i], rec.log, sc.sites)
			if err != nil {
				return nil, fmt.Errorf("crash: artifacts: %w", err)
			}
			groups[i].Finding.Artifacts = a
		}
	}
	rep.SetGroups(groups, len(findings))
	rep.ElapsedSeconds = time.Since(t0).Seconds()
	if c.Out != "" {
		if err := writeReports(c.Out, rep); err != nil {
			return nil, fmt.Errorf("crash: %w", err)
		}
	}
	return rep, nil
}

// amplify applies the sync-point and commit-point mutators.
func amplify(tr *mutators.Trace, a Amplify) (*mutators.Trace, error) {
	if a == AmplifyOff {
		return tr, nil
	}
	if a != "" && a != AmplifyOn && a != AmplifyWide {
		return nil, fmt.Errorf("amplification %q: want on, wide or off", string(a))
	}
	out, err := applyIfAny(tr, mutators.SyncPoints(a == AmplifyWide))
	if err != nil {
		return nil, fmt.Errorf("inserting sync points: %w", err)
	}
	if out, err = applyIfAny(out, mutators.CommitPoints()); err != nil {
		return nil, fmt.Errorf("inserting commit points: %w", err)
	}
	return out, nil
}

// applyIfAny applies m everywhere it matches; a trace with no call it
// matches is returned unchanged (a program that never truncates needs no
// sync point).
func applyIfAny(tr *mutators.Trace, m *mutators.Mutation) (*mutators.Trace, error) {
	out, err := mutators.Apply(tr, m)
	var none *mutators.NoMatchError
	if errors.As(err, &none) {
		return tr, nil
	}
	return out, err
}

// recording is a recorded replay.
type recording struct {
	log        *blockrec.Log
	status     string
	divergence string
}

// record replays tr on a fresh recording disk with logging on, then syncs
// and unmounts while still recording.
func (c *Check) record(ctx context.Context, sb *sandbox, fs blockrec.FSType, tr *mutators.Trace) (*recording, error) {
	if !c.OwnReplay {
		return c.recordSupervised(ctx, sb, fs, tr)
	}
	plan, err := newReplayPlan(tr)
	if err != nil {
		return nil, err
	}
	r, err := sb.mount(fs, c.size())
	if err != nil {
		return nil, err
	}
	defer sb.unmount()
	r.SetPosition(0)
	if err := r.StartLogging(); err != nil {
		return nil, fmt.Errorf("starting the block log: %w", err)
	}
	res, err := c.replay(ctx, sb, plan, r.SetPosition)
	if err != nil {
		return nil, err
	}
	// What the program left in memory reaches the log at the unmount; it
	// is tagged with the trace's last line.
	r.SetPosition(int64(len(tr.Lines)))
	if err := r.Unmount(); err != nil {
		return nil, fmt.Errorf("unmounting the recording disk: %w", err)
	}
	return &recording{log: r.Log(), status: res.status, divergence: res.divergence}, nil
}

// writeReports saves report.json and report.txt under dir, atomically.
func writeReports(dir string, rep *oracle.Report) error {
	if err := blockrec.WriteFileAtomic(filepath.Join(dir, "report.json"), rep.WriteJSON); err != nil {
		return err
	}
	return blockrec.WriteFileAtomic(filepath.Join(dir, "report.txt"), rep.WriteText)
}
