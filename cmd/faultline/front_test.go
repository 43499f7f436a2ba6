package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontEndLinks: the front end is worth having only while it stays
// small: none of the packages that only the other commands need.
func TestFrontEndLinks(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "front", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, heavy := range []string{
		"github.com/faultline/faultline/supervisor",
		"github.com/faultline/faultline/blockrec",
		"github.com/faultline/faultline/crash",
		"github.com/faultline/faultline/suite",
		"github.com/hanwen/go-fuse/v2/fuse",
		"github.com/vbauerster/mpb/v8",
	} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == heavy {
				t.Errorf("the front end links %s", heavy)
			}
		}
	}
}

// TestFrontEndHandOff: the front end runs record itself and hands every
// other command, and a sandboxed record, to faultline-full; without
// faultline-full it still records and says what is missing for the rest.
func TestFrontEndHandOff(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.strace")
	if _, stderr, code := run(t, "", "record", "-o", trace, "--", "true"); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "", "parse", trace); code != 0 {
		t.Errorf("parse through faultline-full: exit %d: %s", code, stderr)
	}
	init := filepath.Join(dir, "init")
	os.Mkdir(init, 0o755)
	os.WriteFile(filepath.Join(init, "a"), []byte("x"), 0o644)
	boxed := filepath.Join(dir, "boxed.strace")
	if _, stderr, code := run(t, "", "record", "--init", init, "--fs", "tmpfs", "-o", boxed, "--", "cat", "a"); code != 0 {
		t.Errorf("sandboxed record through faultline-full: exit %d: %s", code, stderr)
	} else if b, _ := os.ReadFile(boxed); !strings.Contains(string(b), `read(3, "x", `) {
		t.Errorf("sandboxed trace does not show cat reading the init file:\n%s", b)
	}

	// The front end alone, faultline-full neither next to it nor on PATH.
	alone := filepath.Join(dir, "bin", "faultline")
	os.Mkdir(filepath.Dir(alone), 0o755)
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(alone, "record", "-o", trace, "--", "true")
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("record without faultline-full: %v: %s", err, out)
	}
	cmd = exec.Command(alone, "parse", trace)
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitTool || !strings.Contains(string(out), "faultline-full, which is neither next to it nor on PATH") {
		t.Errorf("parse without faultline-full: %v: %s", err, out)
	}
}
