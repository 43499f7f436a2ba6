package blockrec

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCleanupStaleAfterSIGKILL kills a process in the middle of its work,
// with a sandbox mounted (and a file open in it), a FUSE server, loop
// devices and a crash image mounted, and checks that CleanupStale removes
// all of it.
func TestCleanupStaleAfterSIGKILL(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != "READY" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %s", l)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("child never got ready")
	}
	childPrefix := RunRoot + "/" + itoa(cmd.Process.Pid) + "/"
	before := strings.Join(oursUnder(childPrefix, dir), "\n")
	if !strings.Contains(before, "losetup") || !strings.Contains(before, dir) || !strings.Contains(before, "fuse") {
		t.Fatalf("child's objects not all visible before the kill:\n%s", before)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// While the child's runtime dir still exists and its pid is dead,
	// everything is stale.
	rep, err := CleanupStale()
	if err != nil {
		t.Errorf("CleanupStale: %v", err)
	}
	t.Logf("removed: %+v", rep)
	if left := oursUnder(childPrefix, dir); len(left) > 0 {
		t.Errorf("left after CleanupStale:\n%s", strings.Join(left, "\n"))
	}
	if _, err := os.Stat(strings.TrimSuffix(childPrefix, "/")); !os.IsNotExist(err) {
		t.Errorf("child runtime dir still there: %v", err)
	}
	// Loop devices with nothing mounted detach themselves when the child's
	// descriptors close (autoclear); the sandbox's and the crash image's
	// are left for CleanupStale.
	if len(rep.Loops) < 2 || !slices.Contains(rep.Dirs, strings.TrimSuffix(childPrefix, "/")) {
		t.Errorf("report: %+v, want >= 2 loop devices and the child's dir", rep)
	}
	// A second run finds nothing.
	if rep, err := CleanupStale(); err != nil || len(rep.Dirs)+len(rep.Loops)+len(rep.Mounts) > 0 {
		t.Errorf("second CleanupStale: %+v %v", rep, err)
	}
}

// oursUnder lists loop devices, mounts and FUSE mounts that belong to the
// runtime prefix or sit on the sandbox dir.
func oursUnder(prefix, sandbox string) []string {
	var found []string
	out, _ := exec.Command("losetup", "-a").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, prefix) {
			found = append(found, "losetup: "+l)
		}
	}
	m, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(m), "\n") {
		if strings.Contains(l, prefix) || strings.Contains(l, " "+sandbox+" ") {
			found = append(found, "mount: "+l)
		}
	}
	return found
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestCloseAll(t *testing.T) {
	needKernel(t)
	r := &Recorder{Dir: t.TempDir()}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := CloseAll(); err != nil {
		t.Fatal(err)
	}
	if left := oursUnder(RunRoot+"/"+itoa(os.Getpid())+"/", r.Dir); len(left) > 0 {
		t.Errorf("left after CloseAll:\n%s", strings.Join(left, "\n"))
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close after CloseAll: %v", err)
	}
}
