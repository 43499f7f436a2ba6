package blockrec

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isJBD2Commit reports whether a write starts with a jbd2 commit block:
// big-endian magic c03b3998, block type 2.
func isJBD2Commit(d []byte) bool {
	return len(d) >= 8 && binary.BigEndian.Uint32(d) == 0xc03b3998 && binary.BigEndian.Uint32(d[4:]) == 2
}

// firstWith returns the index of the first write containing pat, or -1.
func firstWith(l *Log, pat []byte) int {
	for i, e := range l.Entries {
		if e.Kind == Write && bytes.Contains(e.Data, pat) {
			return i
		}
	}
	return -1
}

// TestRecorderRealPrograms runs ordinary programs in the sandbox and checks
// the log against what ext4 in ordered mode must do: data before the
// journal commit that makes it reachable, a flush at every fsync, the
// commit block itself, and every request tagged with the position current
// when it arrived.
func TestRecorderRealPrograms(t *testing.T) {
	needKernel(t)
	needTool(t, "python3")
	r := startRecorder(t, &Recorder{})
	// Set-up writes are not logged.
	if err := os.WriteFile(filepath.Join(r.Dir, "setup"), bytes.Repeat([]byte("S"), 3000), 0o644); err != nil {
		t.Fatal(err)
	}
	r.SetPosition(5)
	if err := r.StartLogging(); err != nil {
		t.Fatal(err)
	}
	A := bytes.Repeat([]byte("A"), 700)
	G := bytes.Repeat([]byte("G"), 8192)
	H := bytes.Repeat([]byte("H"), 900)
	K := bytes.Repeat([]byte("K"), 600)
	Z := bytes.Repeat([]byte("Z"), 600)

	r.SetPosition(10) // write + rename, no fsync: stays in the page cache
	run(t, r.Dir, "printf '"+string(A)+"' > f.tmp; mv f.tmp f")
	r.SetPosition(20) // write + fsync
	run(t, r.Dir, `python3 -c 'import os; fd=os.open("g", os.O_WRONLY|os.O_CREAT, 0o644); os.write(fd, b"G"*8192); os.fsync(fd); os.close(fd)'`)
	r.SetPosition(25) // dd conv=fsync
	run(t, r.Dir, "printf '"+string(H)+"' | dd of=h conv=fsync status=none")
	r.SetPosition(26) // buffered write ...
	run(t, r.Dir, "printf '"+string(K)+"' > k")
	// ... made durable by sync -f, a syncfs of this disk: a plain sync
	// would flush every disk on the machine, other tests' too.
	r.SetPosition(27)
	run(t, r.Dir, "sync -f k")
	r.SetPosition(28) // buffered, never synced: reaches the disk at unmount
	run(t, r.Dir, "printf '"+string(Z)+"' > z")
	r.SetPosition(30)
	if err := r.Unmount(); err != nil {
		t.Fatal(err)
	}
	l := r.Log()
	var text bytes.Buffer
	if err := WriteLogText(&text, l); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())

	if l.StartPos != 5 {
		t.Errorf("StartPos = %d, want 5", l.StartPos)
	}
	if i := firstWith(l, []byte("SSSSSSSS")); i >= 0 {
		t.Errorf("set-up data logged at entry %d", i)
	}
	last := int64(0)
	for i, e := range l.Entries {
		if e.Pos == 10 || e.Pos == 26 || e.Pos == 28 {
			t.Errorf("entry %d tagged %d: nothing should reach the disk during a cached write", i, e.Pos)
		}
		if e.Pos < last {
			t.Errorf("entry %d: position went back from %d to %d", i, last, e.Pos)
		}
		last = e.Pos
	}

	// expectDurable checks data tagged pos, then a commit block and a flush
	// after it, all tagged pos.
	expectDurable := func(name string, data []byte, pos int64) {
		t.Helper()
		i := firstWith(l, data[:512])
		if i < 0 {
			t.Errorf("%s: data never written", name)
			return
		}
		if l.Entries[i].Pos != pos {
			t.Errorf("%s: data written at entry %d tagged %d, want %d", name, i, l.Entries[i].Pos, pos)
		}
		commit, flush := -1, -1
		for j := i + 1; j < len(l.Entries); j++ {
			e := l.Entries[j]
			if commit < 0 && e.Kind == Write && isJBD2Commit(e.Data) {
				commit = j
			}
			if flush < 0 && e.Kind == Flush {
				flush = j
			}
		}
		if commit < 0 || l.Entries[commit].Pos != pos {
			t.Errorf("%s: no journal commit tagged %d after its data (entry %d)", name, pos, commit)
		}
		if flush < 0 || l.Entries[flush].Pos != pos || flush > commit {
			t.Errorf("%s: no flush tagged %d between data and commit (flush %d, commit %d)", name, pos, flush, commit)
		}
		// The commit is written FUA: the block layer turns that into the
		// write followed by a flush.
		if commit >= 0 && (commit+1 >= len(l.Entries) || l.Entries[commit+1].Kind != Flush) {
			t.Errorf("%s: commit at %d not followed by a flush", name, commit)
		}
	}
	expectDurable("fsync", G, 20)
	expectDurable("dd conv=fsync", H, 25)
	expectDurable("sync", K, 27)
	// Delayed allocation keeps the renamed file's data in memory through
	// another file's fsync; only sync(1) writes it.
	if i := firstWith(l, A[:512]); i < 0 || l.Entries[i].Pos != 27 {
		t.Errorf("renamed file's data: entry %d, want one tagged 27", i)
	}
	expectDurable("unmount", Z, 30)
	if !strings.Contains(text.String(), "flush") {
		t.Error("text log has no flush")
	}
}

func TestRecorderLifecycleErrors(t *testing.T) {
	needKernel(t)
	if err := (&Recorder{}).Start(); err == nil {
		t.Error("Start without Dir succeeded")
	}
	r := &Recorder{Dir: t.TempDir(), FS: "vfat"}
	if err := r.Start(); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Errorf("Start with vfat: %v", err)
	}
	r.Close()
	r = startRecorder(t, &Recorder{})
	if err := r.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestDirectIOLoop checks the recorder also works with LO_FLAGS_DIRECT_IO
// (the loop driver then submits asynchronous direct reads and writes to the
// FUSE file).
func TestDirectIOLoop(t *testing.T) {
	needKernel(t)
	r := startRecorder(t, &Recorder{DirectIO: true})
	b, _ := os.ReadFile("/sys/block/" + strings.TrimPrefix(r.Device(), "/dev/") + "/loop/dio")
	t.Logf("dio=%s", b)
	if err := r.StartLogging(); err != nil {
		t.Fatal(err)
	}
	run(t, r.Dir, "echo hi > f; sync")
	r.Unmount()
	if w, f, _ := r.Log().Stats(); w == 0 || f == 0 {
		t.Errorf("direct-I/O loop logged %d writes, %d flushes", w, f)
	}
}
