package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrashCommand runs `faultline crash` the way a user does: real gzip in
// a real sandbox, the report on stdout, the exit status saying the verdict.
func TestCrashCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultline crash needs root")
	}
	for _, tool := range []string{"gzip", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	init := t.TempDir()
	var data strings.Builder
	for i := 0; i < 200; i++ {
		data.WriteString("a line of text to compress, number ")
		data.WriteString(strings.Repeat("x", i%17))
		data.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(init, "data"), []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()

	stdout, stderr, code := run(t, "", "crash", "--init", init, "--json", "--out", out, "--", "gzip", "data")
	if code != exitFinding {
		t.Fatalf("gzip: exit %d, want %d\nstdout: %s\nstderr: %s", code, exitFinding, stdout, stderr)
	}
	var rep struct {
		Verdict           string  `json:"verdict"`
		ExpectedSnapshots int     `json:"expected_snapshots"`
		CrashSites        int     `json:"crash_sites"`
		InconsistentSites int     `json:"inconsistent_sites"`
		ElapsedSeconds    float64 `json:"elapsed_seconds"`
		Findings          []struct {
			Line          int64             `json:"line"`
			DroppedWrites []json.RawMessage `json:"dropped_writes"`
			Files         []struct {
				Path string `json:"path"`
			} `json:"files"`
			Distance  uint64 `json:"distance"`
			Artifacts struct {
				Image string `json:"image"`
				Mount string `json:"mount_command"`
			} `json:"artifacts"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if rep.Verdict != "inconsistent" || rep.ExpectedSnapshots < 2 || rep.CrashSites == 0 || rep.InconsistentSites == 0 || rep.ElapsedSeconds <= 0 || len(rep.Findings) == 0 {
		t.Fatalf("report: %+v", rep)
	}
	f := rep.Findings[0]
	if f.Line <= 0 || f.Distance == 0 || f.DroppedWrites == nil || len(f.Files) == 0 || f.Files[0].Path != "data.gz" {
		t.Errorf("first finding: %+v", f)
	}
	if _, err := os.Stat(f.Artifacts.Image); err != nil || !strings.Contains(f.Artifacts.Mount, "losetup") {
		t.Errorf("artifacts: %+v (%v)", f.Artifacts, err)
	}
	for _, name := range []string{"report.json", "report.txt", "trace.txt"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}

	stdout, stderr, code = run(t, "", "crash", "--init", init, "--", "gzip", "--synchronous", "data")
	if code != exitOK || !strings.Contains(stdout, "verdict: consistent") {
		t.Errorf("gzip --synchronous: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	bad := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no command", []string{"crash"}, "no command given"},
		{"missing program", []string{"crash", "--", "no-such-program-faultline"}, "no-such-program-faultline"},
		{"missing init", []string{"crash", "--init", filepath.Join(init, "nope"), "--", "true"}, "nope"},
		{"bad fs", []string{"crash", "--fs", "vfat", "--", "true"}, "fs"},
		{"failing setup", []string{"crash", "--setup", "exit 7", "--", "true"}, "--setup"},
		{"bad size", []string{"crash", "--size", "lots", "--", "true"}, "--size"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tt.args...)
			if code != exitTool || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitTool, tt.stderr)
			}
		})
	}
}

// TestCrashInterrupted sends SIGINT while the program runs: exit status 2,
// and the sandbox disk is gone.
func TestCrashInterrupted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultline crash needs root")
	}
	cmd := exec.Command(binary, "crash", "--", "sh", "-c", "echo x > f; sleep 20")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitTool {
		t.Fatalf("after SIGINT: %v, want exit %d\n%s", err, exitTool, errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr %q does not say it was interrupted", errb.String())
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	loops, _ := exec.Command("losetup", "-a").Output()
	tag := fmt.Sprintf("/run/faultline/%d/", cmd.Process.Pid)
	for _, l := range strings.Split(string(mounts)+string(loops), "\n") {
		if strings.Contains(l, tag) || strings.Contains(l, fmt.Sprintf("faultline-crash-%d-", cmd.Process.Pid)) {
			t.Errorf("left behind: %s", l)
		}
	}
}
