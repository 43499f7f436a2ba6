package blockrec

import (
	"fmt"
	"os"
	"testing"
	"time"
)

const childEnv = "FAULTLINE_BLOCKREC_CHILD"

// TestMain doubles as the child process of TestCleanupStaleAfterSIGKILL
// and, after the whole suite, checks that nothing of faultline's is left in
// `losetup -a` or /proc/mounts.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(childMain(dir))
	}
	code := m.Run()
	if os.Geteuid() == 0 {
		if left := ours(nil); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "blockrec tests left kernel objects behind:\n")
			for _, l := range left {
				fmt.Fprintln(os.Stderr, "  ", l)
			}
			code = 1
		}
	}
	os.Exit(code)
}

// childMain sets up a mounted recorder with a file open in it and a
// checker with a crash image mounted, reports READY, and waits to be
// killed.
func childMain(dir string) int {
	r := &Recorder{Dir: dir}
	if err := r.Start(); err != nil {
		fmt.Println("ERR", err)
		return 1
	}
	r.StartLogging()
	os.WriteFile(dir+"/f", []byte("child data"), 0o644)
	r.Unmount()
	l := r.Log()
	// Remount the sandbox from a fresh recorder so both kinds of object
	// are live when the kill comes.
	r2 := &Recorder{Dir: dir}
	if err := r2.Start(); err != nil {
		fmt.Println("ERR", err)
		return 1
	}
	f, _ := os.Create(dir + "/held-open")
	_ = f
	c := &Checker{Log: l, Workers: 2}
	if err := c.Start(); err != nil {
		fmt.Println("ERR", err)
		return 1
	}
	w := c.workers[0]
	flags, data := l.FS.crashMount()
	w.file.set(c.ix.newView(Sites(l, SiteOptions{})[0], c.epochImage(Sites(l, SiteOptions{})[0])))
	if err := mountFS(w.loop.Path, w.mnt, l.FS, flags, data); err != nil {
		fmt.Println("ERR", err)
		return 1
	}
	fmt.Println("READY")
	time.Sleep(time.Minute)
	return 0
}
