package tracer

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dirtyDisk mounts a small ext4 on a loop device (a 5-minute journal
// commit interval keeps jbd2 out of the way, and nothing is left for
// ext4lazyinit to do) and returns its mount point and functions that write
// a new file on it that is not yet written back, and that read the
// device's count of sectors written.
func dirtyDisk(t *testing.T) (mnt string, dirty func(), written func() int) {
	t.Helper()
	dir := t.TempDir()
	img := filepath.Join(dir, "img")
	mnt = filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	// No lazy initialisation: ext4lazyinit would zero the inode tables in
	// the background after mounting, writes the count below would see.
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	// noauto_da_alloc: a file rewritten after a truncate would otherwise
	// be written back at its close, whenever that write-back lands.
	if out, err := exec.Command("mount", "-o", "commit=300,noauto_da_alloc", dev, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	n := 0
	dirty = func() {
		n++
		name := filepath.Join(mnt, "dirty"+strconv.Itoa(n))
		if err := os.WriteFile(name, bytes.Repeat([]byte{'x'}, 256<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := filepath.Join("/sys/block", filepath.Base(dev), "stat")
	return mnt, dirty, func() int {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		n, err := strconv.Atoi(f[6]) // sectors written
		if err != nil {
			t.Fatalf("%s: %q", stat, b)
		}
		return n
	}
}

// TestSyncDir: with SyncDir the program's sync() writes back only the
// sandbox's file system, not another disk's dirty data, and the trace
// still shows sync() = 0; with a seccomp filter that leaves sync out it
// is confined all the same. The control, a syncfs of the other disk,
// shows that the count of sectors written does see a write-back. The
// kernel may write the disk back on its own at any moment (under memory
// pressure, as in a loaded CI run), so a write-back is only held against
// the tracer when it happens on three fresh tries out of three.
func TestSyncDir(t *testing.T) {
	mnt, dirty, written := dirtyDisk(t)
	filter, err := ParseFilter("write")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		filter *Filter
		shown  bool
	}{
		{"every call", nil, true},
		{"seccomp filter without sync", filter, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var flushed []int
			for try := 0; try < 3; try++ {
				dirty()
				before := written()
				var out bytes.Buffer
				c := &Cmd{Path: "sync", Args: []string{"sync"}, Filter: tt.filter, SyncDir: t.TempDir(), Output: &out}
				if err := c.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				trace := out.String()
				if shown := strings.Contains(trace, "sync()") && strings.Contains(trace, "= 0"); shown != tt.shown {
					t.Fatalf("sync() = 0 in the trace: %v, want %v:\n%s", shown, tt.shown, trace)
				}
				if strings.Contains(trace, "INJECTED") || strings.Contains(trace, "syncfs") || strings.Contains(trace, "O_DIRECTORY") {
					t.Fatalf("the trace shows faultline's work, not the program's:\n%s", trace)
				}
				after := written()
				if after == before {
					return
				}
				flushed = append(flushed, after-before)
			}
			t.Errorf("the program's sync() wrote back another disk, sectors each time: %v", flushed)
		})
	}
	dirty()
	before := written()
	if out, err := exec.Command("sync", "-f", mnt).CombinedOutput(); err != nil {
		t.Fatalf("sync -f: %v: %s", err, out)
	}
	if written() == before {
		t.Error("control: syncfs of the other disk wrote nothing back; the checks above prove nothing")
	}
}
