package blockrec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// recordBenchLog records a save loop (write a temp file, fsync it, rename
// over the original) that yields a few hundred distinct crash sites.
func recordBenchLog(b *testing.B) *Log {
	r := startRecorder(b, &Recorder{})
	for i := 0; i < 8; i++ {
		os.WriteFile(filepath.Join(r.Dir, fmt.Sprintf("doc%d", i)), []byte("original\n"), 0o644)
	}
	if err := r.StartLogging(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 32; i++ {
		r.SetPosition(int64(i))
		// A few unsynced side files per save put several writes in each
		// epoch, as an editor's backup and swap files do.
		run(b, r.Dir, fmt.Sprintf("head -c %d /dev/urandom > doc%d.tmp && for j in 1 2 3; do echo $j > side%d.$j; done && dd if=doc%d.tmp of=doc%d.new conv=fsync status=none && mv doc%d.new doc%d && rm doc%d.tmp",
			1000*(i+1), i, i, i, i, i, i, i))
	}
	r.SetPosition(100)
	if err := r.Unmount(); err != nil {
		b.Fatal(err)
	}
	return r.Log()
}

// bareCycle is what one image costs without faultline: the image in a
// tmpfs file, attached, mounted (with journal recovery, like any crash
// image), walked, unmounted, detached.
func bareCycle(b *testing.B, file, mnt string, fs FSType) time.Duration {
	t0 := time.Now()
	ld, err := attachLoop(loopConfig{backing: file})
	if err != nil {
		b.Fatal(err)
	}
	flags, data := fs.crashMount()
	if err := mountFS(ld.Path, mnt, fs, flags, data); err != nil {
		ld.Close()
		b.Fatal(err)
	}
	if _, err := Walk(mnt); err != nil {
		b.Error(err)
	}
	if err := unmountFS(mnt); err != nil {
		b.Error(err)
	}
	if err := ld.Close(); err != nil {
		b.Error(err)
	}
	return time.Since(t0)
}

// BenchmarkCrashSites measures, in one run, (a) the bare cost of attach +
// mount + walk + unmount + detach of one image, and (b) the Checker's cost
// per crash site over a few hundred sites, and reports (b) per core over
// (a) and sites per second.
//
//	go test -run '^$' -bench CrashSites -benchtime 1x ./blockrec/
func BenchmarkCrashSites(b *testing.B) {
	needKernel(b)
	l := recordBenchLog(b)
	sites := Sites(l, SiteOptions{})
	if len(sites) < 200 {
		b.Fatalf("only %d sites", len(sites))
	}

	// (a) Every fourth site's image, materialised in tmpfs, so the bare
	// cost covers the same mix of recoveries as (b).
	ix := newLogIndex(l)
	tmp, err := os.MkdirTemp("/dev/shm", "faultline-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	file, mnt := filepath.Join(tmp, "image"), filepath.Join(tmp, "mnt")
	os.Mkdir(mnt, 0o700)
	var bareTotal time.Duration
	bareN := 0
	for i := 0; i < len(sites); i += 4 {
		s := sites[i]
		img := ix.newView(s, ix.epochImage(Epoch{Start: s.Start, End: s.End})).readImage()
		if err := os.WriteFile(file, img, 0o600); err != nil {
			b.Fatal(err)
		}
		bareTotal += bareCycle(b, file, mnt, l.FS)
		bareN++
	}
	bare := bareTotal / time.Duration(bareN)

	// (b)
	c := &Checker{Log: l}
	if n, err := strconv.Atoi(os.Getenv("FAULTLINE_BENCH_WORKERS")); err == nil {
		c.Workers = n
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cores := runtime.NumCPU()
	var elapsed time.Duration
	checked := 0
	idle0 := idleJiffies()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		err := c.Check(context.Background(), sites, func(r Result) error {
			checked++
			return r.Err
		})
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(t0)
	}
	b.StopTimer()
	idle := float64(idleJiffies()-idle0) / 100 / elapsed.Seconds() / float64(cores)
	perSite := elapsed / time.Duration(checked)
	perCore := perSite * time.Duration(cores)
	b.ReportMetric(float64(len(sites)), "sites")
	b.ReportMetric(float64(bare.Microseconds())/1000, "bare-ms/image")
	b.ReportMetric(float64(perSite.Microseconds())/1000, "ms/site")
	b.ReportMetric(float64(perCore.Microseconds())/1000, "ms/site/core")
	b.ReportMetric(float64(perCore)/float64(bare), "ratio/core")
	b.ReportMetric(float64(checked)/elapsed.Seconds(), "sites/s")
	b.ReportMetric(idle, "idle-cpu-frac")
	b.Logf("%d sites, %d cores, %d workers: bare %v/image, %v/site, %v/site per core, ratio %.2f, %.0f sites/s, CPU %.0f%% idle",
		len(sites), cores, c.Workers, bare, perSite, perCore, float64(perCore)/float64(bare), float64(checked)/elapsed.Seconds(), 100*idle)
}

func idleJiffies() int64 {
	b, _ := os.ReadFile("/proc/stat")
	var user, nice, sys, idle, iowait int64
	fmt.Sscanf(string(b), "cpu %d %d %d %d %d", &user, &nice, &sys, &idle, &iowait)
	return idle + iowait
}
