package blockrec

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mountImageFile attaches an image file to a writable loop device (so
// journal recovery can run) and mounts it read-only, as a finding's
// artifact command does; the returned func undoes both.
func mountImageFile(t *testing.T, img string, fs FSType) (string, func()) {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup %s: %v", img, err)
	}
	dev := strings.TrimSpace(string(out))
	mnt := t.TempDir()
	flags, data := fs.crashMount()
	if err := mountFS(dev, mnt, fs, flags, data); err != nil {
		exec.Command("losetup", "-d", dev).Run()
		t.Fatalf("mounting %s: %v", img, err)
	}
	return mnt, func() {
		if err := unmountFS(mnt); err != nil {
			t.Error(err)
		}
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v %s", dev, err, out)
		}
	}
}

// TestSiteImageMatchesChecker writes every site of a real run to a file,
// mounts it the way a person would, and compares the walk with what the
// Checker saw for the same site.
func TestSiteImageMatchesChecker(t *testing.T) {
	needKernel(t)
	r := startRecorder(t, &Recorder{})
	run(t, r.Dir, "printf 'old content\\n%.0s' $(seq 300) > doc")
	if err := r.StartLogging(); err != nil {
		t.Fatal(err)
	}
	r.SetPosition(1)
	run(t, r.Dir, "printf 'new content\\n%.0s' $(seq 900) > doc.tmp; sync doc.tmp; mv doc.tmp doc")
	r.SetPosition(2)
	if err := r.Unmount(); err != nil {
		t.Fatal(err)
	}
	l := r.Log()
	sites := Sites(l, SiteOptions{K: 1})
	if len(sites) < 3 {
		t.Fatalf("%d sites", len(sites))
	}
	c := &Checker{Log: l, Workers: 2}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[int]*Snapshot{}
	if err := c.Check(context.Background(), sites, func(res Result) error {
		if res.Err == nil {
			want[res.Site.ID] = res.Snapshot
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range sites[:min(len(sites), 6)] {
		if want[s.ID] == nil {
			continue
		}
		img := filepath.Join(dir, "site.img")
		if err := WriteSiteImage(l, s, img); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(img)
		if err != nil || st.Size() != l.ImageSize {
			t.Fatalf("image: %v, size %d want %d", err, st.Size(), l.ImageSize)
		}
		mnt, done := mountImageFile(t, img, l.FS)
		got, err := Walk(mnt)
		done()
		if err != nil {
			t.Fatal(err)
		}
		if !sameFiles(got, want[s.ID]) {
			t.Errorf("site %d: image file shows %v, the checker saw %v", s.ID, names(got), names(want[s.ID]))
		}
	}
	if err := WriteImageAfter(l, len(l.Entries)+1, filepath.Join(dir, "x")); err == nil {
		t.Error("an image after more entries than the log holds was written")
	}
}

func sameFiles(a, b *Snapshot) bool {
	if len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		x, y := a.Nodes[i], b.Nodes[i]
		if x.Path != y.Path || x.Type != y.Type || x.Size != y.Size || x.SHA256 != y.SHA256 {
			return false
		}
	}
	return true
}

func names(s *Snapshot) []string {
	var out []string
	for _, n := range s.Nodes {
		out = append(out, n.Path)
	}
	return out
}

// TestFileMap maps a real file's blocks back to its path, and the journal's
// to the journal.
func TestFileMap(t *testing.T) {
	needKernel(t)
	needTool(t, "debugfs")
	r := startRecorder(t, &Recorder{})
	if err := r.StartLogging(); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("mapped data "), 2000)
	if err := os.MkdirAll(filepath.Join(r.Dir, "sub dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "sub dir", "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Unmount(); err != nil {
		t.Fatal(err)
	}
	l := r.Log()
	img := filepath.Join(t.TempDir(), "final.img")
	if err := WriteImageAfter(l, len(l.Entries), img); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileMap(img, XFS); err != ErrNoFileMap {
		t.Errorf("xfs: %v, want ErrNoFileMap", err)
	}
	fm, err := NewFileMap(img, Ext4)
	if err != nil {
		t.Fatal(err)
	}
	if fm.BlockSize != 4096 {
		t.Errorf("block size %d", fm.BlockSize)
	}
	blocks, err := fm.FileBlocks([]string{"sub dir/f", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	fb := blocks["sub dir/f"]
	if len(fb) != (len(data)+4095)/4096 || len(blocks) != 1 {
		t.Fatalf("blocks %v, want %d for sub dir/f and none for missing", blocks, (len(data)+4095)/4096)
	}
	// The log's writes that carry the data are at those blocks.
	i := firstWith(l, data[:512])
	if i < 0 || l.Entries[i].Off/4096 != fb[0] {
		t.Errorf("data written at entry %d, not at block %d", i, fb[0])
	}
	var journal int64 = -1
	for _, e := range l.Entries {
		if isJBD2Commit(e.Data) {
			journal = e.Off / 4096
		}
	}
	owners, err := fm.Owners([]int64{fb[0], journal, 0})
	if err != nil {
		t.Fatal(err)
	}
	if owners[fb[0]] != "/sub dir/f" || owners[journal] != "(journal)" || owners[0] != "(superblock)" {
		t.Errorf("owners %v", owners)
	}
	// The journal's blocks decode into descriptors, commits and copies of
	// the blocks the file's creation changed (its inode's table block).
	jb, err := fm.JournalBlocks(l, len(l.Entries))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var targets []int64
	for _, j := range jb {
		kinds[j.Kind]++
		if j.Kind == "copy" && j.Target >= 0 {
			targets = append(targets, j.Target)
		}
	}
	if jb[journal].Kind != "commit" || kinds["descriptor"] == 0 || len(targets) == 0 {
		t.Fatalf("journal blocks %v (kinds %v)", jb, kinds)
	}
	named, err := fm.Owners(targets)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range named {
		found = found || n == "(inode table)"
	}
	if !found {
		t.Errorf("no journal copy of the inode table among %v", named)
	}
}
