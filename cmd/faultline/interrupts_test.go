package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRecordInterrupted stops a recording the ways a user does: Ctrl-C,
// kill, a closed terminal. Each must end with exit status 2, a message,
// the trace so far kept where -o said (and parseable), and the program
// gone rather than left stopped under a tracer that no longer exists.
func TestRecordInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "run.strace")
			pidFile := filepath.Join(dir, "pid")
			cmd := exec.Command(binary, "record", "-f", "-o", out, "--",
				"sh", "-c", "echo $$ > "+pidFile+"; exec sleep 30")
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := waitPidFile(t, pidFile)
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitTool {
				t.Fatalf("after %v: %v, want exit %d\n%s", sig, err, exitTool, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted; the trace so far is in "+out) {
				t.Errorf("stderr %q does not say where the trace is", errb.String())
			}
			if _, stderr, code := run(t, "", "parse", out); code != exitOK {
				t.Errorf("the kept trace does not parse (exit %d): %s", code, stderr)
			}
			trace, _ := os.ReadFile(out)
			if !strings.Contains(string(trace), "+++ killed by SIGKILL +++") {
				t.Errorf("the trace does not end with the program killed:\n%s", trace)
			}
			// The program was killed and reaped: no stopped tracee outlives the recording.
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("pid %d still exists after the recording ended (kill 0: %v)", pid, err)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

// waitPidFile waits for the traced shell to write its pid: the recording
// is then under way, past start-up.
func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the traced program did not start within 10s")
	return 0
}

// TestParseInterrupted: a command with nothing to clean up keeps Ctrl-C's
// default, so a parse reading a pipe that never ends still stops at once.
func TestParseInterrupted(t *testing.T) {
	cmd := exec.Command(binary, "parse", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("1234  close(3) = 0\n"))
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("after SIGINT: %v, want killed by SIGINT", err)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("parse ignored SIGINT")
	}
}
