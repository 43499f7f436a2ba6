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

// dirtyDisk mounts a small ext4 on a loop device with a file written but
// not yet written back (a 5-minute journal commit interval keeps jbd2 out
// of the way) and returns its mount point and a function reading the
// device's count of sectors written.
func dirtyDisk(t *testing.T) (mnt string, written func() int) {
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
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	if out, err := exec.Command("mount", "-o", "commit=300", dev, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	if err := os.WriteFile(filepath.Join(mnt, "dirty"), bytes.Repeat([]byte("x"), 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := filepath.Join("/sys/block", filepath.Base(dev), "stat")
	return mnt, func() int {
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
// shows that the count of sectors written does see a write-back.
func TestSyncDir(t *testing.T) {
	mnt, written := dirtyDisk(t)
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
			before := written()
			var out bytes.Buffer
			c := &Cmd{Path: "sync", Args: []string{"sync"}, Filter: tt.filter, SyncDir: t.TempDir(), Output: &out}
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if after := written(); after != before {
				t.Errorf("the program's sync() wrote back another disk: %d sectors", after-before)
			}
			trace := out.String()
			if shown := strings.Contains(trace, "sync()") && strings.Contains(trace, "= 0"); shown != tt.shown {
				t.Errorf("sync() = 0 in the trace: %v, want %v:\n%s", shown, tt.shown, trace)
			}
			if strings.Contains(trace, "INJECTED") || strings.Contains(trace, "syncfs") || strings.Contains(trace, "O_DIRECTORY") {
				t.Errorf("the trace shows faultline's work, not the program's:\n%s", trace)
			}
		})
	}
	before := written()
	if out, err := exec.Command("sync", "-f", filepath.Join(mnt, "dirty")).CombinedOutput(); err != nil {
		t.Fatalf("sync -f: %v: %s", err, out)
	}
	if written() == before {
		t.Error("control: syncfs of the other disk wrote nothing back; the checks above prove nothing")
	}
}
