package anomalies

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/faultline/faultline/mutators"
)

// Real input: traces of real programs, recorded at test time with the
// installed strace (skipped without it), with -f -v -y -s 4096.

func needStrace(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	if testing.Short() {
		t.Skip("records real traces")
	}
}

// record runs the command under strace in dir and reads the trace.
func record(t *testing.T, dir string, args ...string) *mutators.Trace {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", append([]string{"-f", "-v", "-y", "-s", "4096", "-o", out}, args...)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if !(errAs(err, &ee) && ee.ExitCode() > 0 && len(b) == 0) {
			t.Fatalf("strace %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	return readTrace(t, out)
}

func errAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// programs are the real programs whose traces the catalogue is applied to.
func programs(t *testing.T) map[string]*mutators.Trace {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), strings.Repeat("some data\n", 200))
	writeFile(t, filepath.Join(dir, "g"), strings.Repeat("compress me\n", 500))
	writeFile(t, filepath.Join(dir, "m"), "moved\n")
	save := `import os
with open("out.tmp", "w") as f:
    f.write("new contents\n" * 100)
    f.flush()
    os.fsync(f.fileno())
os.rename("out.tmp", "out")
st = os.stat("out")
with open("out") as f:
    f.read()
`
	writeFile(t, filepath.Join(dir, "save.py"), save)
	net := `import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname())
a, _ = s.accept()
c.sendall(b"ping"); a.recv(4)
`
	writeFile(t, filepath.Join(dir, "net.py"), net)
	return map[string]*mutators.Trace{
		"cp":      record(t, dir, "cp", "a", "b"),
		"gzip":    record(t, dir, "gzip", "g"), // compresses and unlinks g
		"mv":      record(t, dir, "mv", "m", "m2"),
		"save.py": record(t, dir, "python3", "save.py"),
		"net.py":  record(t, dir, "python3", "net.py"),
		"sort":    record(t, dir, "sort", "a", "-o", "a"),
	}
}

// TestCatalogueOnRealTraces applies every entry to every real trace it
// applies to and checks the output: it parses, and differs from the input
// only at the selected lines, each with its kept original and (INJECTED).
func TestCatalogueOnRealTraces(t *testing.T) {
	needStrace(t)
	traces := programs(t)
	applied := map[string][]string{}
	for _, a := range All() {
		for name, tr := range traces {
			out, err := a.Apply(tr)
			if err != nil {
				if _, ok := asNoMatch(err); ok {
					continue
				}
				t.Errorf("%s on %s: %v", a.Name, name, err)
				continue
			}
			changed, inserted := checkOnlyMarked(t, tr, out.String())
			applied[a.Name] = append(applied[a.Name], name)
			t.Logf("%-20s %-8s %d line(s) changed, %d inserted", a.Name, name, changed, inserted)
		}
	}
	for _, a := range All() {
		if len(applied[a.Name]) == 0 {
			t.Logf("%s applies to none of the real traces (covered by the forms golden test)", a.Name)
		}
	}
	for _, must := range []string{"rename-exdev", "fsync-eio", "write-enospc", "read-short", "filetype-chr", "open-eacces", "kill", "accept-nonblock", "connect-econnreset", "inode-changed", "file-grows", "unlink-ebusy"} {
		if len(applied[must]) == 0 {
			t.Errorf("%s applied to no real trace", must)
		}
	}
}

func asNoMatch(err error) (*mutators.NoMatchError, bool) {
	var nm *mutators.NoMatchError
	for e := err; e != nil; {
		if n, ok := e.(*mutators.NoMatchError); ok {
			nm = n
			return nm, true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return nil, false
}

// Composing: rename-exdev then fsync-eio then a kill after the rename, on
// the real trace of a program that saves a file the safe way.
func TestComposeOnRealTrace(t *testing.T) {
	needStrace(t)
	tr := programs(t)["save.py"]
	steps := []struct{ anomaly, sel string }{
		{"rename-exdev", "path=out.tmp"},
		{"fsync-eio", "nth=1"},
		{"kill", "syscall=rename"},
	}
	cur := tr
	for _, s := range steps {
		a, _ := Lookup(s.anomaly)
		sel, err := mutators.ParseSelector(s.sel)
		if err != nil {
			t.Fatal(err)
		}
		if cur, err = a.Apply(cur, sel); err != nil {
			t.Fatalf("%s: %v", s.anomaly, err)
		}
	}
	changed, inserted := checkOnlyMarked(t, tr, cur.String())
	if changed != 2 || inserted != 1 {
		t.Errorf("composed: %d changed, %d inserted; want 2 and 1", changed, inserted)
	}
	text := cur.String()
	for _, want := range []string{"= -1 EXDEV (Invalid cross-device link) (INJECTED)", "= -1 EIO (Input/output error) (INJECTED)", "+++ killed by SIGKILL +++"} {
		if !strings.Contains(text, want) {
			t.Errorf("composed trace lacks %q", want)
		}
	}
	// A selector that matches nothing is a typed error naming it.
	a, _ := Lookup("rename-exdev")
	sel, _ := mutators.ParseSelector("path=*.nothing")
	_, err := a.Apply(tr, sel)
	if nm, ok := asNoMatch(err); !ok || nm.Selector != "path=*.nothing" {
		t.Errorf("non-matching selector: %v", err)
	}
}

// crossDevice returns a directory on tmpfs and one on the disk, skipping
// when they are on the same device.
func crossDevice(t *testing.T) (tmpfs, disk string) {
	t.Helper()
	src, err := os.MkdirTemp("/dev/shm", "faultline-test")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	wd, _ := os.Getwd()
	dst, err := os.MkdirTemp(wd, ".exdev-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dst) })
	var a, b syscall.Stat_t
	if syscall.Stat(src, &a) != nil || syscall.Stat(dst, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm and the package directory are on the same device")
	}
	return src, dst
}

// moveSource makes the file to move: owned by nobody when we are root, so
// the owner must be carried explicitly, with a user xattr when tmpfs
// supports them.
func moveSource(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "src")
	writeFile(t, p, strings.Repeat("precious\n", 1000))
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Setxattr(p, "user.faultline", []byte("keep me"), 0); err != nil {
		t.Logf("no user xattr on tmpfs here: %v", err)
	}
	return p
}

// The rename-exdev checker on real fallbacks: GNU mv passes, Python's
// shutil.move is reported, and a program ignoring rename's result fails.
func TestExdevCheckerOnRealPrograms(t *testing.T) {
	needStrace(t)
	a, _ := Lookup("rename-exdev")
	tests := []struct {
		name     string
		cmd      func(src, dst string) []string
		wantFail bool
		want     []string // substrings the findings must contain
	}{
		{"gnu-mv", func(src, dst string) []string { return []string{"mv", src, dst} }, false, nil},
		{"python-shutil", func(src, dst string) []string {
			return []string{"python3", "-c", "import shutil, sys; shutil.move(sys.argv[1], sys.argv[2])", src, dst}
		}, true, []string{"owner was not carried over"}},
		{"ignores-result", func(src, dst string) []string {
			return []string{"python3", "-c", "import ctypes, sys; ctypes.CDLL(None).rename(sys.argv[1].encode(), sys.argv[2].encode())", src, dst}
		}, true, []string{"destination was never created"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "python-shutil" && os.Geteuid() != 0 {
				tt.want = nil // the owner is ours either way
			}
			shm, disk := crossDevice(t)
			src := moveSource(t, shm)
			dst := filepath.Join(disk, "dst")
			tr := record(t, disk, tt.cmd(src, dst)...)
			fs := a.Check(tr.Lines)
			for _, f := range fs {
				t.Logf("%s", f)
			}
			if Failed(fs) != tt.wantFail {
				t.Errorf("checker failed=%v, want %v", Failed(fs), tt.wantFail)
			}
			all := ""
			for _, f := range fs {
				all += f.Message + "\n"
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("findings do not say %q", w)
				}
			}
			if len(fs) == 0 && tt.wantFail {
				t.Error("no findings")
			}
		})
	}
}
