package crash

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/oracle"
)

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("crash checks need root (ptrace, FUSE, loop devices, mount)")
	}
	for _, p := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("crash checks need %s: %v", p, err)
		}
	}
}

func needTools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed", n)
		}
	}
}

// linesSetup makes a file of n unsorted text lines named name.
func linesSetup(name string, n int) string {
	return "i=0; while [ $i -lt " + strconv.Itoa(n) + " ]; do echo \"line $(( (i * 7919) % " + strconv.Itoa(n) + " )) of the unsorted input\"; i=$((i+1)); done > " + name
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// testProgram compiles testdata/NAME.c once per test binary run.
func testProgram(t testing.TB, name string) string {
	t.Helper()
	needTools(t, "gcc")
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "faultline-crash-test-bin")
		if buildErr != nil {
			return
		}
		for _, n := range []string{"save", "overwrite"} {
			out, err := exec.Command("gcc", "-O2", "-Wall", "-o", filepath.Join(binDir, n), filepath.Join("testdata", n+".c")).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("gcc %s.c: %v\n%s", n, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

const docSetup = `i=0; while [ $i -lt 300 ]; do echo "old version of the document $i"; i=$((i+1)); done > doc`

// TestCheckSubjects runs the C³ subjects on the real tools.
func TestCheckSubjects(t *testing.T) {
	needRoot(t)
	needTools(t, "sort", "gzip", "debugfs")
	save := testProgram(t, "save")
	tests := []struct {
		name         string
		argv         []string
		setup        string
		amp          Amplify
		kill         bool
		inconsistent bool
		file         string // a file every finding must name
		kind         string // the kind of every finding
		own          bool   // OwnReplay instead of supervisor.Replay
	}{
		{"sort amplified", []string{"sort", "data", "-o", "data"}, linesSetup("data", 200), AmplifyOn, false, true, "data", oracle.PowerLoss, false},
		{"sort not amplified", []string{"sort", "data", "-o", "data"}, linesSetup("data", 200), AmplifyOff, false, false, "", "", false},
		{"sort killed", []string{"sort", "data", "-o", "data"}, linesSetup("data", 200), AmplifyOff, true, true, "data", oracle.Kill, false},
		{"gzip", []string{"gzip", "data"}, linesSetup("data", 200), AmplifyOn, false, true, "data.gz", oracle.PowerLoss, false},
		{"gzip synchronous", []string{"gzip", "--synchronous", "data"}, linesSetup("data", 200), AmplifyOn, true, false, "", "", false},
		{"save with fsync", []string{save, "doc", "fsync", "12000"}, docSetup, AmplifyOn, true, false, "", "", false},
		{"own replay: sort amplified", []string{"sort", "data", "-o", "data"}, linesSetup("data", 200), AmplifyOn, false, true, "data", oracle.PowerLoss, true},
		{"own replay: sort killed", []string{"sort", "data", "-o", "data"}, linesSetup("data", 200), AmplifyOff, true, true, "data", oracle.Kill, true},
		{"own replay: gzip", []string{"gzip", "data"}, linesSetup("data", 200), AmplifyOn, false, true, "data.gz", oracle.PowerLoss, true},
		{"own replay: gzip synchronous", []string{"gzip", "--synchronous", "data"}, linesSetup("data", 200), AmplifyOn, true, false, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			c := &Check{Argv: tt.argv, Setup: tt.setup, Amplify: tt.amp, Out: out, Unamplified: true, KillPoints: tt.kill, OwnReplay: tt.own}
			rep := run(t, c)
			// Without amplification nothing but the kernel decides when
			// the journal commits and dirty data is written back; with
			// other tests filling memory at once, background writeback
			// can expose sort's truncate for real. That run is not wrong,
			// but this case asserts the quiet machine's answer: the
			// majority of three runs.
			if tt.amp == AmplifyOff && !tt.inconsistent && rep.Verdict == oracle.Inconsistent {
				consistent := 0
				for i := 0; i < 2; i++ {
					c := &Check{Argv: tt.argv, Setup: tt.setup, Amplify: tt.amp, Out: t.TempDir(), Unamplified: true, KillPoints: tt.kill, OwnReplay: tt.own}
					if r := run(t, c); r.Verdict != oracle.Inconsistent {
						consistent++
						rep = r
					}
				}
				if consistent < 2 {
					t.Fatalf("without amplification %d of 3 runs were consistent", consistent)
				}
			}
			if got := rep.Verdict == oracle.Inconsistent; got != tt.inconsistent {
				t.Fatalf("verdict %s, want inconsistent=%v", rep.Verdict, tt.inconsistent)
			}
			if rep.ExpectedSnapshots < 2 {
				t.Errorf("%d expected snapshots, want at least start and end", rep.ExpectedSnapshots)
			}
			if tt.kill && rep.KillPoints == 0 {
				t.Error("no kill point was judged")
			}
			if tt.kind == oracle.Kill && !slices.ContainsFunc(rep.Findings, func(f oracle.GroupedFinding) bool { return f.Kind == oracle.Kill }) {
				t.Error("no kill finding")
			}
			for _, f := range rep.Findings {
				if tt.file != "" && !slices.Contains(f.AffectedFiles(), tt.file) {
					t.Errorf("finding after line %d names %v, want %s", f.Line, f.AffectedFiles(), tt.file)
				}
				switch {
				case f.Kind == tt.kind:
				case tt.kind == oracle.Kill && f.Kind == oracle.PowerLoss:
					// Without amplification a power-loss finding depends
					// on whether the kernel's own journal commit came
					// between sort's truncate and its writeback (under
					// load it does): real, but not this case's subject.
					t.Logf("also a power-loss finding after line %d", f.Line)
				default:
					t.Errorf("finding after line %d is a %s, want %s", f.Line, f.Kind, tt.kind)
				}
				if f.LineText == "" || f.Distance <= DefaultToleranceForTest {
					t.Errorf("finding after line %d: line text %q, d=%d", f.Line, f.LineText, f.Distance)
				}
				if f.Artifacts == nil {
					t.Errorf("finding after line %d has no artifacts", f.Line)
					continue
				}
				if _, err := os.Stat(f.Artifacts.Trace); err != nil {
					t.Error(err)
				}
				if f.Kind == oracle.PowerLoss {
					if _, err := os.Stat(f.Artifacts.Image); err != nil {
						t.Error(err)
					}
				}
			}
			for _, name := range []string{"report.json", "report.txt", "trace.txt", "block.log"} {
				if _, err := os.Stat(filepath.Join(out, name)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

const DefaultToleranceForTest = oracle.DefaultTolerance

func run(t *testing.T, c *Check) *oracle.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	rep, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	t.Logf("%s in %s\n%s", strings.Join(c.Argv, " "), time.Since(t0), text.String())
	return rep
}

// TestSaveWithoutFsync reports what the oracle says of the save path without
// fsync. On ext4 the answer depends on a race (see the package tests'
// notes in the report): auto_da_alloc writes the new file's data at the
// rename, but its blocks are unwritten extents until the write completes,
// and that conversion may land in a later transaction than the rename. So
// either verdict is accepted; an inconsistent one must name doc as zeros.
func TestSaveWithoutFsync(t *testing.T) {
	needRoot(t)
	needTools(t, "debugfs")
	save := testProgram(t, "save")
	// Try a few times to see the inconsistent outcome and check how it is
	// explained; both outcomes are correct answers.
	var rep *oracle.Report
	for try := 0; try < 8; try++ {
		rep = run(t, &Check{Argv: []string{save, "doc", "nofsync", "12000"}, Setup: docSetup})
		if rep.Verdict == oracle.Inconsistent {
			break
		}
	}
	t.Logf("verdict: %s", rep.Verdict)
	for _, f := range rep.Findings {
		found := false
		for _, d := range f.Files {
			if d.Path == "doc" && d.Note == "all zero bytes" {
				found = true
			}
		}
		if !found {
			t.Errorf("finding after line %d: %v, want doc as all zero bytes", f.Line, f.Files)
		}
		if len(f.Pending) == 0 || f.Pending[0].Path != "doc" || !f.Pending[0].OnDisk {
			t.Errorf("finding after line %d: pending %+v, want doc's data on disk but unreadable", f.Line, f.Pending)
		}
	}
}

// TestNothingLeftBehind checks that a run, a failing one included, leaves
// no mount, loop device or work directory.
func TestNothingLeftBehind(t *testing.T) {
	needRoot(t)
	before := leftovers(t)
	c := &Check{Argv: []string{"sh", "-c", "echo x > f"}}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = &Check{Argv: []string{"no-such-program-faultline"}}
	if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no-such-program-faultline") {
		t.Errorf("missing program: %v", err)
	}
	c = &Check{Argv: []string{"true"}, Setup: "exit 3"}
	if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--setup") {
		t.Errorf("failing setup: %v", err)
	}
	// Cancelled half way, in a traced run and while sites are checked:
	// nothing may stay mounted.
	for _, stage := range []string{StageProfile, StageSites} {
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		c = &Check{Argv: []string{"sh", "-c", "echo x > f; sleep 0.5; echo y >> f"}, Progress: func(s string, done, total int) {
			if s == stage {
				once.Do(func() { go func() { time.Sleep(100 * time.Millisecond); cancel() }() })
			}
		}}
		t0 := time.Now()
		if _, err := c.Run(ctx); err == nil && stage == StageProfile {
			t.Errorf("a check cancelled during %s succeeded", stage)
		}
		if d := time.Since(t0); d > 20*time.Second {
			t.Errorf("cancelled during %s, returned after %s", stage, d)
		}
		cancel()
	}
	if after := leftovers(t); after != before {
		t.Errorf("left behind:\n%s\nwas:\n%s", after, before)
	}
}

// leftovers lists this process's mounts, loop devices and work dirs (other
// faultline processes may be running on the machine).
func leftovers(t *testing.T) string {
	var b strings.Builder
	ours := func(l string) bool {
		return strings.Contains(l, fmt.Sprintf("/run/faultline/%d/", os.Getpid())) || strings.Contains(l, "faultline-crash-")
	}
	out, _ := exec.Command("losetup", "-a").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if ours(l) {
			b.WriteString(l + "\n")
		}
	}
	m, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(m), "\n") {
		if ours(l) {
			b.WriteString(l + "\n")
		}
	}
	ents, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("faultline-crash-%d-*", os.Getpid())))
	for _, e := range ents {
		if !strings.Contains(e, "test-bin") {
			b.WriteString(e + "\n")
		}
	}
	return b.String()
}

// TestNondeterministicSetup: a setup that makes different files each time
// it runs must not make a harmless program look inconsistent; every disk
// starts from the files the first setup made.
func TestNondeterministicSetup(t *testing.T) {
	needRoot(t)
	rep := run(t, &Check{Argv: []string{"sh", "-c", "cat r > copy"}, Setup: "head -c 20000 /dev/urandom > r", KillPoints: true})
	if rep.Verdict != oracle.Consistent {
		t.Errorf("verdict %s, want consistent", rep.Verdict)
	}
}

// TestParallelChecks runs two checks at once, as the suite runner does:
// each has its own sandbox, disks and tracer thread.
func TestParallelChecks(t *testing.T) {
	needRoot(t)
	needTools(t, "sort", "gzip")
	var wg sync.WaitGroup
	verdicts := make([]string, 2)
	for i, c := range []*Check{
		{Argv: []string{"gzip", "data"}, Setup: linesSetup("data", 200)},
		{Argv: []string{"gzip", "--synchronous", "data"}, Setup: linesSetup("data", 200), Amplify: AmplifyWide},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := c.Run(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			verdicts[i] = rep.Verdict
		}()
	}
	wg.Wait()
	if verdicts[0] != oracle.Inconsistent || verdicts[1] != oracle.Consistent {
		t.Errorf("verdicts %v, want inconsistent (gzip), consistent (gzip --synchronous)", verdicts)
	}
}
