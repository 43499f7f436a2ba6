package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binary is faultline as `make build` makes it: the front end (record)
// with faultline-full (every other command) next to it, so the tests go
// through the hand-off users go through. full is faultline-full alone.
var binary, full string

// TestMain builds the real binaries once: the command line is tested the
// way users and scripts meet it, exit statuses included.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "faultline-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "faultline")
	full = filepath.Join(dir, "faultline-full")
	// Built as `make build` builds them: static, without cgo.
	for _, b := range [][]string{{"-o", full}, {"-tags", "front", "-o", binary}} {
		build := exec.Command("go", append(append([]string{"build"}, b...), ".")...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestParseAndFmt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.strace")
	bad := filepath.Join(dir, "bad.strace")
	goodText := "1234  openat(AT_FDCWD, \"a\", O_RDONLY) = 3\n1234  read(3,  <unfinished ...>\n1235  exit_group(0)                     = ?\n1234  <... read resumed>\"x\", 10) = 1\n1235  +++ exited with 0 +++\n"
	os.WriteFile(good, []byte(goodText), 0o644)
	os.WriteFile(bad, []byte("close(3) = 0\nread(3, \"x\" = 1\nclose(4) = 0\n"), 0o644)

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string // substring
		stderr   string // substring
		exactOut string
	}{
		{name: "valid trace", args: []string{"parse", good}, code: 0},
		{name: "malformed line", args: []string{"parse", good, bad}, code: 1, stderr: "bad.strace:2:13: expected"},
		{name: "unreadable file", args: []string{"parse", filepath.Join(dir, "missing")}, code: 2, stderr: "no such file"},
		{name: "json events", args: []string{"parse", "--json", good}, code: 0, stdout: `"kind":"resumed"`},
		{name: "fmt is exact", args: []string{"fmt", good}, code: 0, exactOut: goodText},
		{name: "fmt keeps malformed lines", args: []string{"fmt", bad}, code: 1, stdout: "read(3, \"x\" = 1\n", stderr: "bad.strace:2:13"},
		{name: "fmt canonical", args: []string{"fmt", "--canonical", bad}, code: 1, stdout: "close(3)                                = 0\n"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: "Unknown command `frobnicate'"},
		{name: "extra argument", args: []string{"fmt", good, bad}, code: 2, stderr: `fmt: unexpected argument "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out, tt.stdout)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.stderr)
			}
			if tt.exactOut != "" && out != tt.exactOut {
				t.Errorf("stdout\n%s\nwant\n%s", out, tt.exactOut)
			}
		})
	}
}

// TestCommandTree: help lists every command, a misspelt one gets a
// suggestion, and record reads its options as strace does: combined short
// flags, strace's long names, and everything from the program's name on is
// the program's own.
func TestCommandTree(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.strace")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{name: "help lists every command", args: []string{"--help"}, code: 0,
			stdout: []string{"parse", "fmt", "record", "replay", "mutate", "anomalies", "suite", "audit", "blocklog", "crash"}},
		{name: "one command's help", args: []string{"record", "--help"}, code: 0, stdout: []string{"faultline [OPTIONS] record", "--no-seccomp", "--follow-forks"}},
		{name: "misspelt command", args: []string{"recrod", "-f"}, code: 2, stderr: "did you mean `record'"},
		{name: "bad choice", args: []string{"crash", "--fs", "vfat", "--", "true"}, code: 2, stderr: "Allowed values are: ext4, xfs or btrfs"},
		{name: "combined short flags", args: []string{"record", "-fy", "-s", "8", "-o", out, "true"}, code: 0},
		{name: "strace's long names", args: []string{"record", "--follow-forks", "--string-limit=8", "--output", out, "--", "true"}, code: 0},
		{name: "the program's flags are its own", args: []string{"record", "-o", "-", "true", "-f", "--json"}, code: 0,
			stdout: []string{`["true", "-f", "--json"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, errOut)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.stderr)
			}
		})
	}
}
