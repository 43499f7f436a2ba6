package parser

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Traces made at test time by the installed strace, over a spread of
// programs and options: every line must parse, print back byte for byte,
// print identically again from the AST alone (strace's own spacing), and
// the split calls must join.

// threadedC is a small multi-threaded program, so traces have
// "<unfinished ...>" / "<... resumed>" pairs from real interleaving.
const threadedC = `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
static void *work(void *arg) {
	char name[64], buf[16];
	snprintf(name, sizeof name, "t%ld.txt", (long)arg);
	for (int i = 0; i < 20; i++) {
		int fd = open(name, O_CREAT|O_WRONLY|O_TRUNC, 0644);
		write(fd, "hello\n", 6);
		fsync(fd);
		close(fd);
		fd = open(name, O_RDONLY);
		read(fd, buf, sizeof buf);
		close(fd);
		usleep(100);
	}
	return 0;
}
int main(void) {
	pthread_t t[4];
	for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, work, (void *)i);
	for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
	return 0;
}
`

const socketPy = `
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept(); c.sendall(c.recv(100).upper()); c.close()
t = threading.Thread(target=serve); t.start()
s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"ping"); print(s.recv(100)); s.close()
t.join()
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try: u.connect("/nonexistent.sock")
except OSError: pass
s6 = socket.socket(socket.AF_INET6)
try: s6.bind(("::1", 0))
except OSError: pass
`

type realCase struct {
	name string
	opts []string
	argv []string
}

func realCases(dir string) []realCase {
	sh := func(s string) []string { return []string{"sh", "-c", s} }
	return []realCase{
		{"ls-f", []string{"-f"}, []string{"ls", "-la", "/etc"}},
		{"ls-tt-T", []string{"-f", "-tt", "-T"}, []string{"ls", "-l", "/usr"}},
		{"cat-ttt", []string{"-ttt"}, []string{"cat", "/etc/passwd"}},
		{"cat-t", []string{"-t"}, []string{"cat", "/etc/hostname"}},
		{"cat-r", []string{"-f", "-r"}, []string{"cat", "/etc/hostname"}},
		{"cp-yy", []string{"-f", "-yy"}, sh("cp /etc/passwd p && mv p q && rm q")},
		{"stat-v", []string{"-v"}, []string{"stat", "/etc/passwd", "/dev/null"}},
		{"read-s4096", []string{"-s", "4096"}, []string{"cat", "/etc/services"}},
		{"read-xx", []string{"-xx"}, []string{"head", "-c", "100", "/bin/sh"}},
		{"read-x", []string{"-x"}, []string{"head", "-c", "100", "/bin/sh"}},
		{"verbose-X", []string{"-X", "verbose"}, []string{"ls", "/"}},
		{"inject", []string{"-f", "-e", "inject=openat:error=ENOENT:when=3", "-e", "inject=fstat,newfstatat:retval=0:when=2+"}, []string{"ls", "/"}},
		{"inject-delay", []string{"-e", "inject=close:delay_exit=1000"}, []string{"cat", "/etc/hostname"}},
		{"threads", []string{"-f"}, []string{filepath.Join(dir, "threaded")}},
		{"threads-yy-tt", []string{"-f", "-yy", "-tt"}, []string{filepath.Join(dir, "threaded")}},
		{"killed", []string{"-f"}, sh("sleep 5 & kill -9 $!; wait; kill -SEGV $$")},
		{"signals", []string{"-f"}, sh("trap 'echo got' USR1; kill -USR1 $$; sleep 2 & p=$!; kill -STOP $p; kill -CONT $p; kill -TERM $p; wait")},
		{"sockets", []string{"-f", "-yy"}, []string{"python3", "-c", socketPy}},
		{"python", []string{"-f", "-s", "64"}, []string{"python3", "-c", "import os, json; open('f.tmp','w').write(json.dumps(dict(os.environ))); os.rename('f.tmp','f')"}},
		{"git", []string{"-f"}, sh("git init -q r && cd r && echo hi > a && git add a && git -c user.email=a@b -c user.name=n commit -qm m && git log --oneline")},
		{"sqlite3", []string{"-f"}, []string{"sqlite3", "db.sqlite", "create table t(x); insert into t values (1),(2); select sum(x) from t;"}},
		{"exec-missing", []string{"-f"}, sh("/nonexistent/prog; exit 3")},
	}
}

func requireStrace(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not installed (run .ci/setup)")
	}
}

func TestRealTraces(t *testing.T) {
	requireStrace(t)
	dir := t.TempDir()
	cc := exec.Command("gcc", "-pthread", "-O1", "-o", filepath.Join(dir, "threaded"), "-x", "c", "-")
	cc.Stdin = strings.NewReader(threadedC)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("compiling the threaded program: %v\n%s", err, out)
	}
	for _, c := range realCases(dir) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			out := filepath.Join(work, "trace")
			args := append(append([]string{"-o", out}, c.opts...), c.argv...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "strace", args...)
			cmd.Dir = work
			if b, err := cmd.CombinedOutput(); err != nil && !bytes.Contains(b, []byte("exit")) {
				t.Logf("strace %v: %v (the program's own failure is part of some cases)", args, err)
			}
			files, _ := filepath.Glob(out + "*")
			if len(files) == 0 {
				t.Fatalf("strace wrote no trace")
			}
			total := 0
			for _, f := range files {
				total += checkTraceFile(t, f)
			}
			if total < 5 {
				t.Fatalf("only %d lines traced", total)
			}
		})
	}
}

func TestRealTracesFF(t *testing.T) {
	requireStrace(t)
	work := t.TempDir()
	out := filepath.Join(work, "trace")
	cmd := exec.Command("strace", "-ff", "-o", out, "sh", "-c", "ls / | wc -l; (echo a; echo b) | sort")
	cmd.Dir = work
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace -ff: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(out + ".*")
	if len(files) < 3 {
		t.Fatalf("strace -ff wrote %d files, want one per process", len(files))
	}
	for _, f := range files {
		checkTraceFile(t, f)
	}
}

// checkTraceFile asserts the four properties on every line and returns the
// number of lines.
func checkTraceFile(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j Joiner
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
		text := sc.Text()
		l, err := ParseLine(path, n, text)
		if err != nil {
			t.Errorf("%v\n\t%s", err, text)
			continue
		}
		if got := l.String(); got != text {
			t.Errorf("%s:%d: printed back differently\n\tgot  %s\n\twant %s", path, n, got, text)
		}
		l.Raw = ""
		if got := l.String(); got != text {
			t.Errorf("%s:%d: printed from the AST differently\n\tgot  %s\n\twant %s", path, n, got, text)
		}
		if _, err := j.Add(l); err != nil {
			t.Errorf("join: %v", err)
		}
		if ex, ok := l.Body.(*Exit); ok && ex.KilledBy != "" {
			j.Forget(l.Prefix.Pid.N)
		}
	}
	return n
}
