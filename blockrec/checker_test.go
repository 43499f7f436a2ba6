package blockrec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// recordWorkload records a small save-by-rename workload with a few fsyncs
// and returns the log and the sandbox's snapshot just before the final
// unmount.
func recordWorkload(t testing.TB, fs FSType, size int64) (*Log, *Snapshot) {
	t.Helper()
	r := startRecorder(t, &Recorder{FS: fs, Size: size})
	if err := os.WriteFile(filepath.Join(r.Dir, "doc"), []byte("version 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.StartLogging(); err != nil {
		t.Fatal(err)
	}
	r.SetPosition(1)
	run(t, r.Dir, "printf 'version 2, longer than before\\n' > doc.tmp && mv doc.tmp doc")
	r.SetPosition(2)
	run(t, r.Dir, "mkdir -p sub && head -c 20000 /dev/urandom > sub/blob && ln -s ../doc sub/link")
	r.SetPosition(3)
	run(t, r.Dir, "printf 'version 3\\n' | dd of=doc.tmp conv=fsync status=none && mv doc.tmp doc && sync")
	r.SetPosition(4)
	run(t, r.Dir, "echo appended >> sub/blob; rm -f sub/link")
	snap, err := Walk(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	r.SetPosition(5)
	if err := r.Unmount(); err != nil {
		t.Fatal(err)
	}
	return r.Log(), snap
}

func sameSnapshot(a, b *Snapshot) error {
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Errorf("%d entries vs %d", len(a.Nodes), len(b.Nodes))
	}
	for i := range a.Nodes {
		x, y := a.Nodes[i], b.Nodes[i]
		if x.Path != y.Path || x.Type != y.Type || x.Size != y.Size || x.SHA256 != y.SHA256 || x.Target != y.Target || x.Hist != y.Hist {
			return fmt.Errorf("%s differs: %+v vs %+v", x.Path, x, y)
		}
	}
	return nil
}

// TestCheckerRealLog generates every crash site of a real ext4 run, checks
// the copy-on-write views and the dedup against brute force, mounts every
// site, and checks that the last site (everything applied) is exactly the
// tree the program left.
func TestCheckerRealLog(t *testing.T) {
	needKernel(t)
	l, final := recordWorkload(t, Ext4, 16<<20)
	writes, flushes, _ := l.Stats()
	sites := Sites(l, SiteOptions{Cap: -1})
	t.Logf("%d writes, %d flushes, %d epochs, %d sites", writes, flushes, len(Epochs(l)), len(sites))
	checkSitesBruteForce(t, l, SiteOptions{Cap: -1}, sites)
	checkAllMount(t, l, sites, final)
}

func checkAllMount(t *testing.T, l *Log, sites []Site, final *Snapshot) {
	t.Helper()
	c := &Checker{Log: l}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	n := 0
	t0 := time.Now()
	var last Result
	err := c.Check(context.Background(), sites, func(r Result) error {
		n++
		if r.Err != nil {
			t.Errorf("%v: %v", r.Site, r.Err)
		}
		if r.Site.ID == len(sites)-1 {
			last = r
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(sites) {
		t.Errorf("checked %d of %d sites", n, len(sites))
	}
	t.Logf("%d sites mounted and walked in %v with %d workers", n, time.Since(t0), c.Workers)
	if last.Snapshot == nil {
		t.Fatal("no snapshot for the last site")
	}
	if err := sameSnapshot(last.Snapshot, final); err != nil {
		t.Errorf("last crash site is not the final tree: %v", err)
	}
}

func TestCheckerCancel(t *testing.T) {
	needKernel(t)
	l, _ := recordWorkload(t, Ext4, 16<<20)
	sites := Sites(l, SiteOptions{})
	c := &Checker{Log: l, Workers: 2}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := c.Check(ctx, sites, func(r Result) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n >= len(sites) {
		t.Errorf("cancelled Check: err %v after %d of %d sites", err, n, len(sites))
	}
	stop := errors.New("stop")
	if err := c.Check(context.Background(), sites, func(Result) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Check with failing callback: %v", err)
	}
	// Still usable after both.
	if err := c.Check(context.Background(), sites[:2], func(r Result) error { return r.Err }); err != nil {
		t.Errorf("Check after cancellation: %v", err)
	}
}

// TestCheckerServesExactImages reads each site's image back through the
// kernel (loop device over the cached FUSE file) in a shuffled order, with
// a mount in between so journal recovery leaves scratch writes behind, and
// compares it with the image built from the site's description. It is what
// makes the page-cache sharing between sites safe.
func TestCheckerServesExactImages(t *testing.T) {
	needKernel(t)
	l, _ := recordWorkload(t, Ext4, 16<<20)
	sites := Sites(l, SiteOptions{})
	c := &Checker{Log: l, Workers: 1}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := c.workers[0]
	rng := rand.New(rand.NewPCG(1, 2))
	order := rng.Perm(len(sites))
	got := make([]byte, l.ImageSize)
	for n, i := range order[:min(len(order), 40)] {
		s := sites[i]
		if err := c.swap(w, s); err != nil {
			t.Fatal(err)
		}
		if err := w.loop.dropCaches(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.loop.f.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		if want := siteImage(l, s); !bytes.Equal(got, want) {
			t.Fatalf("visit %d, %v: the loop device does not read back the site's image", n, s)
		}
		flags, data := l.FS.crashMount()
		if err := mountFS(w.loop.Path, w.mnt, l.FS, flags, data); err != nil {
			t.Fatal(err)
		}
		if err := unmountFS(w.mnt); err != nil {
			t.Fatal(err)
		}
		if err := w.loop.dropCaches(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOtherFileSystems records on xfs and btrfs and mounts every crash site.
func TestOtherFileSystems(t *testing.T) {
	needKernel(t)
	for _, fs := range []struct {
		t    FSType
		size int64
	}{{XFS, 64 << 20}, {Btrfs, 128 << 20}} {
		t.Run(string(fs.t), func(t *testing.T) {
			needTool(t, "mkfs."+string(fs.t))
			l, final := recordWorkload(t, fs.t, fs.size)
			sites := Sites(l, SiteOptions{})
			writes, flushes, _ := l.Stats()
			t.Logf("%d writes, %d flushes, %d sites", writes, flushes, len(sites))
			checkAllMount(t, l, sites, final)
		})
	}
}
