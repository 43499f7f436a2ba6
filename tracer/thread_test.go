package tracer

import (
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOnChildlessThread: a thread that forked a command another goroutine
// has not waited for yet is not used for tracing (its wait4(-1) would reap
// the command), and the command's own Wait still succeeds.
func TestOnChildlessThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tainted := unix.Gettid()
	cmd := exec.Command("sleep", "0.2")
	if err := cmd.Start(); err != nil { // forked from this locked thread
		t.Fatal(err)
	}
	if childless() {
		t.Fatal("childless() does not see the thread's child")
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	ran := make(chan int, 1)
	var sawChildren bool
	onChildlessThread(func() {
		defer runtime.UnlockOSThread()
		sawChildren = !childless()
		ran <- unix.Gettid()
	})
	if tid := <-ran; tid == tainted {
		t.Errorf("f ran on the thread with a child (%d)", tid)
	}
	if sawChildren {
		t.Error("f's thread has children")
	}
	if err := <-waited; err != nil {
		t.Errorf("the command's own Wait: %v", err)
	}
}
