package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// These tests run real programs (coreutils, python3, small C programs
// built with gcc) under ptrace in real sandboxes; they need root.

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mount namespaces, tmpfs, ptrace")
	}
}

// buildC compiles testdata/NAME.c and returns the binary's path.
func buildC(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", out, filepath.Join("testdata", name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	return out
}

// world makes an --init directory: files name → content; a name ending
// in "/" is a directory.
func world(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "init")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// record runs argv in a fresh sandbox at box populated from init, traced
// with -f -y -v -s 256, and returns the trace.
func record(t *testing.T, box, init string, argv ...string) *mutators.Trace {
	t.Helper()
	ctx := context.Background()
	sb := &Sandbox{Dir: box, Init: init, Umask: -1}
	if err := sb.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	var buf bytes.Buffer
	run := &Run{Sandbox: sb, Path: argv[0], Args: argv, Follow: true, Verbose: true, DecodeFDs: true,
		StringLimit: 256, Output: &buf, Tool: "faultline test", Stdout: devNull(t), Stderr: devNull(t)}
	if err := run.Run(ctx); err != nil {
		t.Fatalf("record %v: %v", argv, err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(argv[len(argv)-1])+".strace")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := mutators.Read(file, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func devNull(t *testing.T) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mutate(t *testing.T, tr *mutators.Trace, name string, sels ...string) *mutators.Trace {
	t.Helper()
	a, ok := anomalies.Lookup(name)
	if !ok {
		t.Fatalf("no anomaly %s", name)
	}
	var ss []mutators.Selector
	for _, s := range sels {
		sel, err := mutators.ParseSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, sel)
	}
	out, err := a.Apply(tr, ss...)
	if err != nil {
		t.Fatalf("mutate %s: %v", name, err)
	}
	return out
}

// checkClean fails when this process left mounts or its runtime dir.
func checkClean(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("/run/faultline/%d", os.Getpid())
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, own) || strings.Contains(l, "faultline-sandbox") {
			t.Errorf("left mounted: %s", l)
		}
	}
	if _, err := os.Stat(own); err == nil {
		ents, _ := os.ReadDir(own)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("runtime dir %s left with %v", own, names)
	}
}

func replay(t *testing.T, tr *mutators.Trace, r *Replay) (*Report, error) {
	t.Helper()
	r.Trace = tr
	if r.Stdout == nil {
		r.Stdout, r.Stderr = devNull(t), devNull(t)
	}
	if r.Timeout == 0 {
		r.Timeout = 30 * time.Second
	}
	return r.Run(context.Background())
}

func TestUneditedReplaysWithoutDivergence(t *testing.T) {
	needRoot(t)
	two := buildC(t, "twofiles")
	threads := buildC(t, "threads")
	// The concurrent programs run 20 times: a flaky lockstep shows there.
	tests := []struct {
		name string
		init map[string]string
		argv []string
		runs int
	}{
		{"mv", map[string]string{"a": "hello\n", "d/": ""}, []string{"mv", "a", "d/"}, 3},
		{"c program", nil, []string{two}, 3},
		{"shell pipeline", map[string]string{"a": "b\na\nc\n"}, []string{"/bin/sh", "-c", "sort a | cat > b; cat b"}, 20},
		{"threaded program", nil, []string{threads}, 20},
		{"python rename", map[string]string{"a": "x", "d/": "", "rename.py": readFile(t, "testdata/rename.py")}, []string{python3(t), "rename.py"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := filepath.Join(t.TempDir(), "box")
			init := world(t, tt.init)
			tr := record(t, box, init, tt.argv...)
			for i := 0; i < tt.runs; i++ {
				rep, err := replay(t, tr, &Replay{})
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if rep.Outcome != None || rep.Diverged || len(rep.Injections) != 0 {
					var b strings.Builder
					rep.Text(&b)
					t.Fatalf("run %d: outcome %s, diverged %v\n%s", i, rep.Outcome, rep.Diverged, b.String())
				}
				if rep.ExitCode() != 0 {
					t.Errorf("exit code %d", rep.ExitCode())
				}
			}
			checkClean(t)
		})
	}
}

// python3 is the system's interpreter itself, not a version manager's
// shim script (which forks and races on SIGCHLD).
func python3(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no python3")
	return ""
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnomalyOutcomes(t *testing.T) {
	needRoot(t)
	fsyncIgnore := buildC(t, "fsync_ignore")
	filetype := buildC(t, "filetype")
	renameIgnore := buildC(t, "rename_ignore")
	tests := []struct {
		name     string
		init     map[string]string
		argv     []string
		anomaly  string
		sels     []string
		outcome  Outcome
		exitCode int
		check    func(t *testing.T, rep *Report)
	}{
		{
			name: "GNU mv falls back to copying", anomaly: "rename-exdev",
			init: map[string]string{"a": "hello\n", "d/": ""}, argv: []string{"mv", "a", "d/"},
			outcome: Recovered,
			check: func(t *testing.T, rep *Report) {
				if anomalies.Failed(rep.Findings) {
					t.Errorf("the rename-exdev checker fails GNU mv: %v", rep.Findings)
				}
				if rep.Anomaly != "rename-exdev" {
					t.Errorf("anomaly %q not recognised", rep.Anomaly)
				}
				if !regexp.MustCompile(`unlinkat\(AT_FDCWD[^,]*, "a", 0\) += 0`).MatchString(strings.Join(rep.After, "\n")) {
					t.Errorf("after diverging mv should unlink the source:\n%s", strings.Join(rep.After, "\n"))
				}
			},
		},
		{
			name: "python os.rename raises", anomaly: "rename-exdev",
			init: map[string]string{"a": "x", "d/": "", "rename.py": readFile(t, "testdata/rename.py")}, argv: []string{python3(t), "rename.py"},
			outcome: HandledError,
			check: func(t *testing.T, rep *Report) {
				if rep.ExitStatus != 1 {
					t.Errorf("python exited %d, want 1 (traceback)", rep.ExitStatus)
				}
			},
		},
		{
			name: "python shutil.move falls back", anomaly: "rename-exdev",
			init: map[string]string{"a": "x", "d/": "", "move.py": readFile(t, "testdata/shutil_move.py")}, argv: []string{python3(t), "move.py"},
			outcome: Recovered,
			check: func(t *testing.T, rep *Report) {
				// shutil.copy2 copies data, mode, times and xattrs but
				// not the owner, and never fsyncs the copy.
				if len(rep.Findings) == 0 {
					t.Errorf("the checker has nothing to say about shutil.move")
				}
				for _, f := range rep.Findings {
					t.Logf("shutil.move: %s", f)
				}
			},
		},
		{
			name: "a program that ignores rename's result", anomaly: "rename-exdev",
			init: map[string]string{"a": "x", "d/": ""}, argv: []string{renameIgnore},
			outcome: Unhandled, exitCode: 1,
		},
		{
			name: "gzip refuses a character device", anomaly: "filetype-chr", sels: []string{"syscall=newfstatat,path=a"},
			init: map[string]string{"a": strings.Repeat("gzip me\n", 100)}, argv: []string{"gzip", "a"},
			outcome: HandledError,
		},
		{
			name: "cat does not notice a character device", anomaly: "filetype-chr", sels: []string{"syscall=newfstatat,path=a"},
			init: map[string]string{"a": "x\n"}, argv: []string{"cat", "a"},
			outcome: Unhandled, exitCode: 1,
		},
		{
			name: "ignored fsync EIO", anomaly: "fsync-eio",
			argv: []string{fsyncIgnore}, outcome: Unhandled, exitCode: 1,
		},
		{
			name: "stat says character device", anomaly: "filetype-chr", sels: []string{"syscall=newfstatat,path=a"},
			init: map[string]string{"a": "x"}, argv: []string{filetype, "a"}, outcome: HandledError,
			check: func(t *testing.T, rep *Report) {
				if len(rep.Injections) == 0 || !strings.Contains(strings.Join(rep.Injections[0].Changes, " "), "S_IFCHR") {
					t.Errorf("st_mode not patched: %+v", rep.Injections)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := filepath.Join(t.TempDir(), "box")
			tr := record(t, box, world(t, tt.init), tt.argv...)
			edited := mutate(t, tr, tt.anomaly, tt.sels...)
			rep, err := replay(t, edited, &Replay{})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			rep.Text(&b)
			if rep.Outcome != tt.outcome {
				t.Fatalf("outcome %s, want %s\n%s", rep.Outcome, tt.outcome, b.String())
			}
			if rep.ExitCode() != tt.exitCode {
				t.Errorf("exit code %d, want %d", rep.ExitCode(), tt.exitCode)
			}
			if tt.check != nil {
				tt.check(t, rep)
			}
			checkClean(t)
		})
	}
}

// A person edits a recorded trace in a text editor, without any marker:
// the replay applies the edit and reports it as a hand edit.
func TestHandEdits(t *testing.T) {
	needRoot(t)
	filetype := buildC(t, "filetype")
	tests := []struct {
		name  string
		init  map[string]string
		argv  []string
		edit  *regexp.Regexp // the line to edit; group 1 is kept
		with  string         // what replaces the rest of it
		shown string         // the report's injection names this
	}{
		// The stat of a says it is a character device: the program
		// refuses it.
		{"stat says character device", map[string]string{"a": "x"}, []string{filetype, "a"},
			regexp.MustCompile(`(?m)^(\d+ +newfstatat\(AT_FDCWD</[^>]*>, "a", \{[^}]*?st_mode=)S_IFREG`), "${1}S_IFCHR", "S_IFCHR"},
		// cp copies with copy_file_range; the copy into b fails ENOSPC:
		// cp must report it and exit 1.
		{"cp copy fails ENOSPC", map[string]string{"a": "hello\n"}, []string{"cp", "a", "b"},
			regexp.MustCompile(`(?m)^(\d+ +copy_file_range\(3</[^>]*/a>, NULL, 4</[^>]*/b>, NULL, \d+, 0\) += )6$`), "${1}-1 ENOSPC (No space left on device)", "ENOSPC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := filepath.Join(t.TempDir(), "box")
			tr := record(t, box, world(t, tt.init), tt.argv...)
			text := tr.String()
			if !tt.edit.MatchString(text) {
				t.Fatalf("no line to edit in\n%s", text)
			}
			edited, err := mutators.Read(tr.File, strings.NewReader(tt.edit.ReplaceAllString(text, tt.with)))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replay(t, edited, &Replay{})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			rep.Text(&b)
			if rep.ExitStatus != 1 || rep.Outcome != HandledError {
				t.Fatalf("exit %d, outcome %s: the edit did not take effect\n%s", rep.ExitStatus, rep.Outcome, b.String())
			}
			if len(rep.Injections) != 1 || rep.Injections[0].Kind != "hand-edit" || !strings.Contains(rep.Injections[0].Call, tt.shown) {
				t.Errorf("injections %+v, want the hand edit", rep.Injections)
			}
			if !strings.Contains(b.String(), "hand-edit") {
				t.Errorf("the report does not show the hand edit:\n%s", b.String())
			}
			checkClean(t)
		})
	}
}

func TestInsertedKill(t *testing.T) {
	needRoot(t)
	two := buildC(t, "twofiles")
	box := filepath.Join(t.TempDir(), "box")
	tr := record(t, box, world(t, nil), two)
	edited := mutate(t, tr, "kill", "syscall=close,path=first")
	sb := &Sandbox{Dir: box, Umask: -1}
	if err := sb.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	rep, err := replay(t, edited, &Replay{Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != Crashed || !rep.KilledAsInjected || rep.Signal != "SIGKILL" {
		t.Fatalf("outcome %s, signal %s, as injected %v", rep.Outcome, rep.Signal, rep.KilledAsInjected)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("an injected kill performed as written is handled; exit code %d", rep.ExitCode())
	}
	if _, err := os.Stat(filepath.Join(sb.HostDir(), "first")); err != nil {
		t.Errorf("first should exist: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sb.HostDir(), "second")); err == nil {
		t.Errorf("second exists: the program was not killed after the first close")
	}
	sb.Close()
	checkClean(t)
}

func TestHung(t *testing.T) {
	needRoot(t)
	box := filepath.Join(t.TempDir(), "box")
	tr := record(t, box, world(t, nil), "sleep", "1")
	start := time.Now()
	rep, err := replay(t, tr, &Replay{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != Hung || rep.ExitCode() != 1 {
		t.Fatalf("outcome %s, exit code %d", rep.Outcome, rep.ExitCode())
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the hung program was not killed at the timeout (%v)", d)
	}
	checkClean(t)
}

func TestWorldDiffersBeforeInjection(t *testing.T) {
	needRoot(t)
	filetype := buildC(t, "filetype")
	box := filepath.Join(t.TempDir(), "box")
	tr := record(t, box, world(t, map[string]string{"a": "x"}), filetype, "a")
	edited := mutate(t, tr, "filetype-chr", "syscall=newfstatat,path=a")
	// The world of this replay has no file a.
	rep, err := replay(t, edited, &Replay{Init: world(t, map[string]string{"b": "x"})})
	var we *WorldError
	if !errors.As(err, &we) {
		var b strings.Builder
		if rep != nil {
			rep.Text(&b)
		}
		t.Fatalf("error %v, want a WorldError\n%s", err, b.String())
	}
	if !strings.Contains(we.Expected, `"a", {`) || !strings.Contains(we.Actual, "ENOENT") || we.Line == 0 {
		t.Errorf("world error does not say where: %v", we)
	}
	if !strings.HasPrefix(err.Error(), "replay could not be done: line ") {
		t.Errorf("message %q", err)
	}
	checkClean(t)
}

func TestSandboxCopiesInitFaithfully(t *testing.T) {
	needRoot(t)
	init := world(t, map[string]string{"f": "data", "sub/": ""})
	f := filepath.Join(init, "f")
	os.Chmod(f, 0o4751)
	os.Chown(f, 1234, 5678)
	os.Symlink("f", filepath.Join(init, "link"))
	os.Link(f, filepath.Join(init, "hard"))
	mt := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	os.Chtimes(f, mt, mt)
	xattr := exec.Command("setfattr", "-n", "user.tag", "-v", "v1", f).Run() == nil

	sb := &Sandbox{Dir: filepath.Join(t.TempDir(), "box"), Init: init, Umask: -1}
	if err := sb.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	var want, got []string
	for _, root := range []string{init, sb.HostDir()} {
		// Sizes of directories are the file system's, not the tree's.
		out, err := exec.Command("find", root, "(", "-type", "d", "-printf", "%P %M %U %G - %T@ %l %n\n", ")", "-o", "-printf", "%P %M %U %G %s %T@ %l %n\n").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		sort.Strings(lines)
		if root == init {
			want = lines
		} else {
			got = lines
		}
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("sandbox differs from init:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if xattr {
		out, err := exec.Command("getfattr", "--only-values", "-n", "user.tag", filepath.Join(sb.HostDir(), "f")).Output()
		if err != nil || string(out) != "v1" {
			t.Errorf("xattr not copied: %q %v", out, err)
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sb.Dir); err == nil {
		t.Errorf("the sandbox dir %s made for the run is still there", sb.Dir)
	}
	checkClean(t)
}

func TestSetupAndUser(t *testing.T) {
	needRoot(t)
	// The user must be able to reach the sandbox's directory.
	parent := t.TempDir()
	for d := parent; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	box := filepath.Join(parent, "box")
	sb := &Sandbox{Dir: box, Setup: "echo made > f && mkdir d && chmod 777 .", User: "nobody", Umask: -1}
	if err := sb.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	var buf bytes.Buffer
	run := &Run{Sandbox: sb, Path: "/bin/sh", Args: []string{"sh", "-c", "id -u > uid; cat f > g; pwd > where"}, Follow: true, Output: &buf, Tool: "test"}
	if err := run.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !run.Status.Exited() || run.Status.ExitStatus() != 0 {
		t.Fatalf("status %v\n%s", run.Status, buf.String())
	}
	check := func(name, want string) {
		b, err := os.ReadFile(filepath.Join(sb.HostDir(), name))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
	check("uid", "65534")
	check("g", "made")
	check("where", box)
	h, err := ParseHeader(mustRead(t, buf.Bytes()).Lines)
	if err != nil {
		t.Fatal(err)
	}
	if h.Sandbox == nil || h.Sandbox.Setup != sb.Setup || h.Sandbox.User != "nobody" || h.Sandbox.Dir != box || h.Cwd != box {
		t.Errorf("header does not describe the sandbox: %+v", h.Sandbox)
	}
	if len(h.Env) == 0 || h.Command[0] != "sh" || h.Command[2] != "id -u > uid; cat f > g; pwd > where" {
		t.Errorf("header command %q env %d", h.Command, len(h.Env))
	}
	sb.Close()
	checkClean(t)
}

func mustRead(t *testing.T, b []byte) *mutators.Trace {
	tr, err := mutators.Read("trace", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestCancelLeavesNothing(t *testing.T) {
	needRoot(t)
	box := filepath.Join(t.TempDir(), "box")
	tr := record(t, box, world(t, nil), "sleep", "0.3")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := &Replay{Trace: tr, Stdout: devNull(t), Stderr: devNull(t)}
	if _, err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("error %v, want interrupted", err)
	}
	checkClean(t)
}
