package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// scriptedEngine stands in for the supervisor and the crash check in the
// runner's own tests (parallelism, sharding, ordering, errors,
// cancellation); the real engine is tested in faultline_test.go. Its
// recording is a real one (testdata/gzip.strace), and Replay checks that
// the edit it is given is really in the trace.
type scriptedEngine struct {
	t        *testing.T
	outcomes map[string]Outcome // by anomaly name; patches are "patch"
	delay    time.Duration
	running  atomic.Int32
	peak     atomic.Int32
	mu       sync.Mutex
	replays  []string
	records  atomic.Int32
}

func (e *scriptedEngine) enter() func() {
	n := e.running.Add(1)
	for {
		p := e.peak.Load()
		if n <= p || e.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return func() { e.running.Add(-1) }
}

func (e *scriptedEngine) Record(ctx context.Context, p *Program) (*mutators.Trace, error) {
	e.records.Add(1)
	return readTrace(e.t, "testdata/gzip.strace"), nil
}

func (e *scriptedEngine) Replay(ctx context.Context, p *Program, t *mutators.Trace, a *anomalies.Anomaly, _ string) (*ReplayResult, error) {
	defer e.enter()()
	name := "patch"
	if a != nil {
		name = a.Name
	}
	if !strings.Contains(t.String(), "(INJECTED)") && !strings.Contains(t.String(), "S_IFCHR") {
		return nil, fmt.Errorf("%s: the trace carries no edit", name)
	}
	select {
	case <-time.After(e.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	e.replays = append(e.replays, name)
	e.mu.Unlock()
	o, ok := e.outcomes[name]
	if !ok {
		return nil, fmt.Errorf("no outcome scripted for %s", name)
	}
	return &ReplayResult{Outcome: o, Divergence: "line 62: read(4) instead of close(4)"}, nil
}

func (e *scriptedEngine) Crash(ctx context.Context, p *Program, o CrashOptions) (*CrashResult, error) {
	defer e.enter()()
	select {
	case <-time.After(e.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &CrashResult{Verdict: Inconsistent, Sites: 12, Inconsistent: 2,
		Findings: []string{"power loss after line 76 (unlinkat(3</tmp/fl-sites>, \"f\", 0) = 0): /f.gz empty"}}, nil
}

const runnerSuite = `name = "gzip"
command = ["gzip", "f"]
trace = "TRACE"

[crash]
expect = "inconsistent"

[[anomaly]]
name = "read-eio"
select = ["syscall=read,nth=1"]
expect = "handled-error"

[[anomaly]]
name = "write-enospc"
expect = "handled-error"

[[anomaly]]
name = "filetype-chr"
expect = "handled-error"

[[anomaly]]
name = "rename-exdev"
expect = "recovered"

[[patch]]
file = "chr.patch"
expect = "handled-error"
`

func loadRunnerSuite(t *testing.T) *Suite {
	t.Helper()
	patch := mustRead(t, "testdata/gzip-fstat-chr.patch")
	abs, _ := filepathAbs("testdata/gzip.strace")
	p := writeSuite(t, strings.Replace(runnerSuite, "TRACE", abs, 1), map[string]string{"chr.patch": patch})
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRunner(t *testing.T) {
	s := loadRunnerSuite(t)
	e := &scriptedEngine{t: t, delay: 30 * time.Millisecond, outcomes: map[string]Outcome{
		"read-eio": HandledError, "write-enospc": Unhandled, "filetype-chr": HandledError, "patch": HandledError,
	}}
	var progress []int
	r := &Runner{Engine: e, Jobs: 2, Progress: func(res *Result, done, total int) {
		progress = append(progress, done)
		if total != 6 {
			t.Errorf("progress total %d, want 6", total)
		}
	}}
	rep, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range rep.Results {
		got = append(got, fmt.Sprintf("%s %s ok=%v", res.Check, res.Got, res.OK))
	}
	want := []string{
		"crash inconsistent ok=true",
		"read-eio syscall=read,nth=1 handled-error ok=true",
		"write-enospc unhandled ok=false",
		"filetype-chr handled-error ok=true",
		"rename-exdev error ok=false", // gzip renames nothing
		"chr.patch handled-error ok=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rep.Unexpected() != 1 || rep.Errors() != 1 {
		t.Errorf("unexpected %d errors %d, want 1 and 1", rep.Unexpected(), rep.Errors())
	}
	if d := rep.Results[4].Detail; !strings.Contains(d, `none is one rename-exdev changes (a successful rename`) {
		t.Errorf("rename-exdev's error says %q", d)
	}
	if p := e.peak.Load(); p != 2 {
		t.Errorf("at most %d checks ran at once, want 2 (--jobs 2)", p)
	}
	if len(progress) != 6 || progress[5] != 6 {
		t.Errorf("progress %v", progress)
	}
	if e.records.Load() != 0 {
		t.Errorf("recorded %d times with a pinned trace", e.records.Load())
	}
	if rp := rep.Results[2].Reproduce; rp != "faultline suite "+s.File+" --run write-enospc" {
		t.Errorf("reproduce %q", rp)
	}
}

func TestRunnerOnlyAndShard(t *testing.T) {
	s := loadRunnerSuite(t)
	outcomes := map[string]Outcome{"read-eio": HandledError, "write-enospc": Unhandled, "filetype-chr": HandledError, "patch": HandledError}

	r := &Runner{Engine: &scriptedEngine{t: t, outcomes: outcomes}, Only: []string{"filetype-chr", "crash"}}
	rep, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[0].Check != "crash" || rep.Results[1].Check != "filetype-chr" {
		t.Errorf("--run gave %+v", rep.Results)
	}
	r.Only = []string{"filetype-chrr"}
	if _, err := r.Run(context.Background(), s); err == nil || !strings.Contains(err.Error(), `no check named "filetype-chrr" in the suite (it has: "crash"`) {
		t.Errorf("unknown --run: %v", err)
	}

	// Every check lands in exactly one of N shards, whatever N.
	for n := 1; n <= 4; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			r := &Runner{Engine: &scriptedEngine{t: t, outcomes: outcomes}, Shard: Shard{I: i, N: n}}
			rep, err := r.Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range rep.Results {
				seen[res.Check]++
			}
		}
		if len(seen) != len(s.Checks) {
			t.Errorf("N=%d: %d checks ran, want %d", n, len(seen), len(s.Checks))
		}
		for name, k := range seen {
			if k != 1 {
				t.Errorf("N=%d: %s ran %d times", n, name, k)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "1/1", want: Shard{1, 1}},
		{in: "3/4", want: Shard{3, 4}},
		{in: "0/4", err: "want 1 <= I <= N"},
		{in: "5/4", err: "want 1 <= I <= N"},
		{in: "2", err: "want I/N"},
		{in: "a/b", err: "want I/N"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %v %v", tt.in, got, err)
		}
	}
}

func TestRunnerCancel(t *testing.T) {
	s := loadRunnerSuite(t)
	e := &scriptedEngine{t: t, delay: time.Hour, outcomes: map[string]Outcome{}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := (&Runner{Engine: e, Jobs: 2}).Run(ctx, s)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted after 0 of 6 checks") {
		t.Errorf("error %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("cancellation took %s", time.Since(start))
	}
	if n := e.running.Load(); n != 0 {
		t.Errorf("%d checks still running", n)
	}
}

// TestReportRenderings pins the table, JSON and JUnit forms.
func TestReportRenderings(t *testing.T) {
	rep := &Report{Suite: "gzip", File: "examples/gzip/suite.toml", Command: []string{"gzip", "f"}, Elapsed: Duration(3 * time.Second),
		Results: []*Result{
			{Check: "crash", Kind: KindCrash, Expect: Inconsistent, Got: Inconsistent, OK: true, Severity: SevDataLoss,
				Elapsed: Duration(2 * time.Second), Detail: "2 of 12 crash states inconsistent",
				Findings: []string{"power loss after line 76 (unlinkat): /f.gz empty"}, Reproduce: "faultline suite examples/gzip/suite.toml --run crash"},
			{Check: "write-enospc", Kind: KindAnomaly, Anomaly: "write-enospc", Expect: HandledError, Got: Unhandled, Severity: SevUnhandled,
				Elapsed: Duration(150 * time.Millisecond), Reproduce: "faultline suite examples/gzip/suite.toml --run write-enospc"},
			{Check: "rename-exdev", Kind: KindAnomaly, Anomaly: "rename-exdev", Expect: Recovered, Got: Error,
				Elapsed: Duration(time.Millisecond), Detail: "writing the anomaly into the recording: selector \"all\" matches no call",
				Reproduce: "faultline suite examples/gzip/suite.toml --run rename-exdev"},
			{Check: "read-eio syscall=read,path=/d/f,nth=1", Kind: KindAnomaly, Anomaly: "read-eio", Got: Crashed, OK: true, Severity: SevCrash,
				Site:    &SiteInfo{Line: 62, Call: "read(4</d/f>, \"1\\n2\"..., 65536)", Stands: 6, Which: "first", Select: "syscall=read,path=/d/f,nth=1"},
				Elapsed: Duration(300 * time.Millisecond), Reproduce: "faultline mutate --anomaly read-eio --select 'syscall=read,path=/d/f,nth=1' out/trace.strace | faultline replay -"},
		}}
	for _, form := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"report-table.txt", func(b *bytes.Buffer) error { return rep.WriteTable(b) }},
		{"report-findings.txt", func(b *bytes.Buffer) error { return rep.WriteFindings(b) }},
		{"report.json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
		{"report-junit.xml", func(b *bytes.Buffer) error { return rep.WriteJUnit(b) }},
	} {
		t.Run(form.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := form.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, form.name, b.Bytes())
		})
	}
	fs := rep.Findings()
	if len(fs) != 3 || fs[0].Got != Crashed || fs[1].Got != Inconsistent || fs[2].Got != Unhandled {
		t.Errorf("findings not most serious first: %v", fs)
	}
}
