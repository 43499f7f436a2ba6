package tracer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// syncBuffer is a trace sink the test can read while recording goes on.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// parseAll checks that every line of a trace parses and returns them.
func parseAll(t *testing.T, trace string) []*parser.Line {
	t.Helper()
	var out []*parser.Line
	sc := bufio.NewScanner(strings.NewReader(trace))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		l, err := parser.ParseLine("trace", n, sc.Text())
		if err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", n, err, sc.Text())
		}
		out = append(out, l)
	}
	return out
}

func TestCommandNotFound(t *testing.T) {
	c := &Cmd{Path: "faultline-no-such-command", Output: &bytes.Buffer{}}
	err := c.Start(context.Background())
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Start = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "faultline-no-such-command") {
		t.Errorf("error %q does not name the command", err)
	}
}

func TestAttachFailure(t *testing.T) {
	c := &Cmd{Pid: 1 << 22, Output: &bytes.Buffer{}} // above pid_max's default
	err := c.Start(context.Background())
	if err == nil || !errors.Is(err, unix.ESRCH) || !strings.Contains(err.Error(), "attach to pid") {
		t.Fatalf("Start = %v, want an attach error with ESRCH", err)
	}
}

func TestParseFilter(t *testing.T) {
	f, err := ParseFilter("%file,write")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"openat", "rename", "write", "execve"} {
		if !f.Has(sysNumberOf(t, n)) {
			t.Errorf("%%file,write lacks %s", n)
		}
	}
	if f.Has(sysNumberOf(t, "read")) || f.Has(sysNumberOf(t, "mmap")) {
		t.Errorf("%%file,write has read or mmap")
	}
	neg, err := ParseFilter("!%memory")
	if err != nil {
		t.Fatal(err)
	}
	if neg.Has(sysNumberOf(t, "mmap")) || !neg.Has(sysNumberOf(t, "read")) {
		t.Errorf("!%%memory wrong")
	}
	for _, bad := range []string{"%bogus", "nosuchcall", ""} {
		if _, err := ParseFilter(bad); !errors.Is(err, ErrBadFilter) {
			t.Errorf("ParseFilter(%q) = %v, want ErrBadFilter", bad, err)
		}
	}
}

// Cancelling a recording (what Ctrl-C does) kills every tracee, leaves
// nothing stopped or traced, and the trace written so far parses.
func TestCancelKillsAndTraceParses(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &Cmd{Path: "sh", Args: []string{"sh", "-c", "sleep 30 & while :; do : > /dev/null; done"}, Follow: true, Output: &out}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "clone") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	pids := tracedPids(t, c)
	cancel()
	err := c.Wait()
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want the cancellation", err)
	}
	for _, pid := range pids {
		// Gone, or a zombie its new parent has yet to reap: never alive,
		// stopped or traced.
		st, err := os.ReadFile(filepathJoin("/proc", pid, "status"))
		if err != nil {
			continue
		}
		if !strings.Contains(string(st), "State:\tZ") {
			t.Errorf("pid %d survived the cancellation:\n%s", pid, st)
		}
	}
	lines := parseAll(t, out.String())
	last := lines[len(lines)-1]
	if e, ok := last.Body.(*parser.Exit); !ok || e.KilledBy != "SIGKILL" {
		t.Errorf("last line %q, want +++ killed by SIGKILL +++", last.String())
	}
}

func filepathJoin(dir string, pid int, name string) string {
	return filepath.Join(dir, itoa(pid), name)
}

// tracedPids lists the processes being traced (from the tracer's own
// bookkeeping, read under its lock).
func tracedPids(t *testing.T, c *Cmd) []int {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	var out []int
	for pid := range c.t.live {
		out = append(out, pid)
	}
	if len(out) < 2 {
		t.Fatalf("expected the shell and its children to be traced, have %v", out)
	}
	return out
}

// Attaching with -p and cancelling detaches: the program goes on and
// exits by itself.
func TestAttachDetach(t *testing.T) {
	prog := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done; exit 7")
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cmd{Pid: prog.Process.Pid, Output: &out}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	c.Wait()
	err := prog.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("attached program ended with %v, want exit status 7", err)
	}
	parseAll(t, out.String())
	if !strings.Contains(out.String(), "wait4(") {
		t.Errorf("trace of the attached shell has no wait4:\n%s", out.String())
	}
}

// The hooks: a call skipped at entry fails with the errno the hook chose
// and is marked INJECTED; Inject runs an extra call in the tracee.
func TestHooksSkipAndInject(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data")
	if err := os.WriteFile(path, []byte("hello\n"), 0644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var injected int64
	var tgid int
	c := &Cmd{Path: "cat", Args: []string{"cat", path}, Output: &out}
	c.Hooks.Enter = func(s *Stop) {
		if s.Name == "openat" {
			if p, _ := s.ReadString(s.Regs.Arg(1), 4096); p == path {
				if err := s.Skip(-int64(unix.EIO)); err != nil {
					t.Error(err)
				}
				r, err := s.Inject(unix.SYS_GETPID)
				if err != nil {
					t.Error(err)
				}
				injected, tgid = r, s.Tgid
			}
		}
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer devnull.Close()
	c.Stderr = devnull
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Status.ExitStatus() != 1 {
		t.Errorf("cat exited %d, want 1 (its open failed)", c.Status.ExitStatus())
	}
	want := `openat(AT_FDCWD, "` + path + `", O_RDONLY) = -1 EIO (Input/output error) (INJECTED)`
	if !strings.Contains(out.String(), want) {
		t.Errorf("trace lacks %q:\n%s", want, out.String())
	}
	if injected != int64(tgid) {
		t.Errorf("injected getpid = %d, want %d", injected, tgid)
	}
	parseAll(t, out.String())
}

// With a filter, the seccomp program keeps untraced calls from stopping
// the tracee; only the traced ones (and exits) are printed.
func TestSeccompFilter(t *testing.T) {
	f, err := ParseFilter("%file")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &Cmd{Path: "ls", Args: []string{"ls", "/"}, Filter: f, Follow: true, Output: &out, Tool: "faultline test"}
	devnull, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer devnull.Close()
	c.Stdout = devnull
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !c.t.seccomp {
		t.Fatal("the filter did not use seccomp")
	}
	lines := parseAll(t, out.String())
	calls := 0
	for _, l := range lines {
		switch b := l.Body.(type) {
		case *parser.Call:
			calls++
			if !f.Has(sysNumberOf(t, b.Name)) {
				t.Errorf("untraced call in the trace: %s", l.String())
			}
		}
	}
	if calls == 0 || !strings.Contains(out.String(), "# traced: %file (filtered by seccomp-bpf)") {
		t.Errorf("trace has %d calls and no filter header:\n%s", calls, out.String())
	}
}

// sysNumberOf is the number of a call the test names; a name the table
// lacks is the test's mistake, not a number to check.
func sysNumberOf(t *testing.T, name string) int {
	t.Helper()
	nr, ok := sysNumber(name)
	if !ok {
		t.Fatalf("no system call named %q", name)
	}
	return nr
}
