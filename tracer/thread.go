package tracer

import (
	"bytes"
	"os"
	"runtime"
	"time"
)

// The tracing thread. ptrace binds tracees to the thread that attached
// them, so the tracer runs on one locked OS thread and hears from all of
// them with wait4(-1, __WALL|__WNOTHREAD). That wait also reaps the
// thread's other children: Go forks an os/exec command on whichever thread
// the calling goroutine happens to run, and if that goroutine moves on
// before it waits, and the thread is then locked for tracing, the tracer
// reaps the command and its Wait fails with ECHILD. Seen as "cp -a ...:
// waitid: no child processes" from a crash check's sandbox set-up while
// another check of the same suite was recording. So the tracer only runs
// on a thread without children of its own.

// onChildlessThread runs f locked to an OS thread that has no children
// (f decides whether the thread is unlocked afterwards). A thread that
// has some is kept locked, so nothing else forks on it, until whoever
// started them has reaped them, and f runs from another goroutine, on
// another thread.
func onChildlessThread(f func()) {
	runtime.LockOSThread()
	if childless() {
		f()
		return
	}
	go onChildlessThread(f)
	for wait := time.Millisecond; !childless(); wait = min(2*wait, 100*time.Millisecond) {
		time.Sleep(wait)
	}
	runtime.UnlockOSThread()
}

// childless reports whether the calling thread has no child processes,
// zombies included. Without /proc/thread-self/children (a kernel without
// CONFIG_PROC_CHILDREN) there is nothing to check.
func childless() bool {
	b, err := os.ReadFile("/proc/thread-self/children")
	return err != nil || len(bytes.TrimSpace(b)) == 0
}
