package blockrec

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// needKernel skips tests that need root, FUSE and loop devices.
func needKernel(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("blockrec tests need root (FUSE direct mount, loop devices, mount)")
	}
	for _, p := range []string{"/dev/fuse", "/dev/loop-control"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("blockrec tests need %s: %v", p, err)
		}
	}
}

func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
}

func startRecorder(t testing.TB, r *Recorder) *Recorder {
	t.Helper()
	if r.Dir == "" {
		r.Dir = t.TempDir()
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

func run(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

// ours lists the loop devices and mounts of this test process: other
// packages' tests (go test runs them at once) and other faultline runs
// have theirs under their own pids.
func ours(t testing.TB) []string {
	own := RunRoot + "/" + strconv.Itoa(os.Getpid()) + "/"
	var found []string
	out, _ := exec.Command("losetup", "-a").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, own) {
			found = append(found, "losetup: "+l)
		}
	}
	m, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(m), "\n") {
		if strings.Contains(l, own) {
			found = append(found, "mount: "+l)
		}
	}
	return found
}
