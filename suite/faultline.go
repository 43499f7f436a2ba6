package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/crash"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/supervisor"
)

// DefaultSandboxDir is where the program sees its sandbox (its working
// directory) when the suite does not say: the same path on every run, so
// a recording's paths are valid in each replay.
const DefaultSandboxDir = "/tmp/faultline-sandbox"

// cleanEnv is the environment a suite's program gets besides its own env
// keys: the same on every machine, so recordings agree.
var cleanEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}

// Faultline is the real Engine: recordings and replays by package
// supervisor in its sandbox, crash checks by package crash.
type Faultline struct {
	// Tool names faultline in the traces' headers.
	Tool string
	// Out, when set, is a directory where each check's artifacts go (a
	// subdirectory per check: the replay's trace and report, the crash
	// check's report and images).
	Out string
	// CrashWorkers is how many crash images one crash check mounts at
	// once; 0 lets package crash choose.
	CrashWorkers int
}

func (f *Faultline) tool() string {
	if f.Tool == "" {
		return "faultline suite"
	}
	return f.Tool
}

func (p *Program) env() []string {
	return append(append([]string(nil), cleanEnv...), p.Env...)
}

func (p *Program) sandbox() *supervisor.Sandbox {
	sb := supervisor.NewSandbox(DefaultSandboxDir)
	sb.Init, sb.Setup, sb.User = p.Init, p.Setup, p.User
	// Recording and replay run on a RAM file system; the recording disk
	// (and its file system) is the crash check's.
	return sb
}

// Record runs the program once in a fresh sandbox, following children,
// with -y paths.
func (f *Faultline) Record(ctx context.Context, p *Program) (*mutators.Trace, error) {
	if len(p.Command) == 0 {
		return nil, fmt.Errorf("no command to record")
	}
	sb := p.sandbox()
	if err := sb.Open(ctx); err != nil {
		return nil, fmt.Errorf("setting up the sandbox: %w", err)
	}
	defer sb.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	var buf bytes.Buffer
	run := &supervisor.Run{
		Sandbox: sb, Path: p.Command[0], Args: p.Command, Env: p.env(),
		Follow: true, DecodeFDs: true, Output: &buf, Tool: f.tool(),
		Stdin: devnull, Stdout: devnull, Stderr: devnull,
	}
	rctx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	if err := run.Run(rctx); err != nil {
		return nil, err
	}
	if err := sb.Close(); err != nil {
		return nil, fmt.Errorf("closing the sandbox: %w", err)
	}
	return mutators.Read("recording of "+strings.Join(p.Command, " "), &buf)
}

// Crash runs package crash's check on the program.
func (f *Faultline) Crash(ctx context.Context, p *Program, o CrashOptions) (*CrashResult, error) {
	fs := o.FS
	if fs == "" {
		fs = p.FS
	}
	c := &crash.Check{
		Argv: p.Command, Env: p.env(), Init: p.Init, Setup: p.Setup,
		FS: blockrec.FSType(fs), K: o.K, Amplify: crash.Amplify(o.Amplify),
		KillPoints: o.KillPoints, Workers: f.CrashWorkers, Timeout: p.Timeout,
	}
	if o.Tolerance > 0 {
		c.Tolerance, c.TolSet = uint64(o.Tolerance), true
	}
	if c.Amplify == "" {
		c.Amplify = crash.AmplifyOn
	}
	if f.Out != "" {
		c.Out = filepath.Join(f.Out, "crash")
	}
	rep, err := c.Run(ctx)
	if err != nil {
		return nil, err
	}
	res := &CrashResult{Verdict: Outcome(rep.Verdict), Sites: rep.CrashSites + rep.KillPoints,
		Inconsistent: rep.InconsistentSites, Notes: rep.Notes}
	if c.Out != "" {
		res.Report = filepath.Join(c.Out, "report.txt")
	}
	for _, g := range rep.Findings {
		res.Findings = append(res.Findings, crashFinding(&g.Finding, len(g.Sites)))
	}
	return res, nil
}

// crashFinding is one grouped crash finding in a line.
func crashFinding(f *oracle.Finding, sites int) string {
	var b strings.Builder
	if f.Kind == oracle.Kill {
		b.WriteString("killed")
	} else {
		b.WriteString("power loss")
	}
	fmt.Fprintf(&b, " after line %d", f.Line)
	if f.LineText != "" {
		fmt.Fprintf(&b, " (%s)", strings.Join(strings.Fields(pidPrefix().ReplaceAllString(f.LineText, "")), " "))
	}
	if f.MountError != "" {
		fmt.Fprintf(&b, ": the file system cannot be mounted: %s", f.MountError)
	} else {
		var files []string
		for _, fd := range f.Files {
			files = append(files, describeFileDiff(fd))
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(files, "; "))
		}
		fmt.Fprintf(&b, " (%d bytes from nowhere)", f.Distance)
	}
	if sites > 1 {
		fmt.Fprintf(&b, ", %d crash states", sites)
	}
	return b.String()
}

func describeFileDiff(d oracle.FileDiff) string { return d.String() }

// Replay runs the program against the edited trace in a fresh sandbox
// (built from the trace's header, which the recording wrote).
func (f *Faultline) Replay(ctx context.Context, p *Program, t *mutators.Trace, a *anomalies.Anomaly, name string) (*ReplayResult, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	if a != nil {
		t = withAnomalyHeader(t, a.Name)
	}
	r := &supervisor.Replay{
		Trace: t, Timeout: p.Timeout, Tool: f.tool(),
		Stdin: devnull, Stdout: devnull, Stderr: devnull,
	}
	rep, err := r.Run(ctx)
	if err != nil {
		return nil, err
	}
	res := &ReplayResult{Outcome: Outcome(rep.Outcome), Findings: rep.Findings}
	if rep.Outcome == supervisor.None {
		return nil, fmt.Errorf("the replay performed no anomaly: the edit changed nothing the program does")
	}
	if d := rep.Divergence; d != nil {
		res.Divergence = fmt.Sprintf("diverged at line %d: expected %s, the program did %s", d.Line,
			oneLine(d.Expected), oneLine(d.Actual))
		if d.Reason != "" {
			res.Divergence += " (" + d.Reason + ")"
		}
	}
	if f.Out != "" {
		base := filepath.Join(f.Out, slug(name))
		if err := blockrec.WriteFileAtomic(base+".strace", t.Write); err != nil {
			return nil, fmt.Errorf("saving the edited trace: %w", err)
		}
		if err := rep.Save(base); err != nil {
			return nil, err
		}
		res.Report = base + ".replay.json"
	}
	return res, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(pidPrefix().ReplaceAllString(strings.TrimSpace(s), "")), " ")
}

// slug makes a check's name a file name.
func slug(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_.")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// withAnomalyHeader names the anomaly in the trace's header, as faultline
// mutate does, so the replay runs its checkers.
func withAnomalyHeader(t *mutators.Trace, name string) *mutators.Trace {
	i := 0
	for i < len(t.Lines) {
		if _, ok := t.Lines[i].Body.(*parser.Comment); !ok {
			break
		}
		i++
	}
	lines := make([]*parser.Line, 0, len(t.Lines)+1)
	lines = append(append(append(lines, t.Lines[:i]...), parser.NewComment(supervisor.AnomalyLine(name))), t.Lines[i:]...)
	return &mutators.Trace{File: t.File, Lines: lines}
}
