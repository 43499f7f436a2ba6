package blockrec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Checker mounts crash images and walks them, in parallel. Configure the
// exported fields, Start, call Check as often as needed, Close.
//
// It keeps one FUSE server with a file per worker, and one loop device and
// mount point per worker, for its whole life: between sites only the view
// behind the worker's file is swapped and the device's cache dropped, so a
// site costs the kernel's mount, recovery, walk and unmount and little else.
type Checker struct {
	// Log is the recorded run the sites come from.
	Log *Log
	// Workers is the number of images checked at once; 3*runtime.NumCPU()
	// if zero. Much of every attach, mount and unmount is spent waiting
	// in the kernel (RCU grace periods, FUSE round trips), not computing:
	// on 2 cores 6 workers measured 1.38x the bare cost per core and 200
	// sites/s, where 3 gave 1.51-1.57x and 155 sites/s
	// (FAULTLINE_BENCH_WORKERS=N scripts/bench-blockrec.sh).
	Workers int
	// Walk snapshots a mounted image; blockrec.Walk if nil.
	Walk func(dir string) (*Snapshot, error)
	// DirectIO sets LO_FLAGS_DIRECT_IO on the workers' loop devices.
	DirectIO bool

	mu      sync.Mutex
	checkMu sync.Mutex // one Check at a time: workers are shared
	ix      *logIndex
	objDir  string
	fs      *fuseServer
	workers []*checkWorker
	epochs  map[int]map[int64][]byte
	started bool
	closed  bool
}

var errClosed = errors.New("blockrec: Checker is not started or already closed")

type checkWorker struct {
	idx  int
	file *servedFile
	loop *loopDev
	mnt  string
	prev *cowView // the view the kernel may still have pages of
}

// Result is the outcome of checking one site. Err is set when the image
// could not be mounted or walked: for a crash image that is itself a
// finding, not a failure of the Checker.
type Result struct {
	Site     Site
	Snapshot *Snapshot
	Err      error
	Duration time.Duration
}

// Start sets up the workers' FUSE files, loop devices and mount points.
func (c *Checker) Start() (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("blockrec: Checker.Start called twice")
	}
	c.started = true
	if c.Log == nil || len(c.Log.Base) == 0 {
		return errors.New("blockrec: Checker.Log is empty")
	}
	if c.Workers <= 0 {
		c.Workers = 3 * runtime.NumCPU()
	}
	if c.Walk == nil {
		c.Walk = Walk
	}
	defer func() {
		if err != nil {
			c.releaseLocked()
		}
	}()
	register(c)
	c.ix = newLogIndex(c.Log)
	c.epochs = map[int]map[int64][]byte{}
	if c.objDir, err = newObjectDir("check"); err != nil {
		return err
	}
	files := make([]*servedFile, c.Workers)
	for i := range files {
		files[i] = &servedFile{name: fmt.Sprintf("view%d", i), size: c.Log.ImageSize, cached: true}
	}
	if c.fs, err = startFUSE(filepath.Join(c.objDir, "fuse"), files); err != nil {
		return err
	}
	for i, f := range files {
		w := &checkWorker{idx: i, file: f, mnt: filepath.Join(c.objDir, fmt.Sprintf("mnt%d", i))}
		c.workers = append(c.workers, w)
		if err = os.Mkdir(w.mnt, 0o700); err != nil {
			return fmt.Errorf("blockrec: creating %s: %w", w.mnt, err)
		}
		if w.loop, err = attachLoop(loopConfig{backing: c.fs.path(i), directIO: c.DirectIO}); err != nil {
			return err
		}
	}
	return nil
}

// epochImage returns the shared all-writes map of the epoch a site belongs
// to, building it on first use.
func (c *Checker) epochImage(s Site) map[int64][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.epochs[s.Start]
	if !ok {
		m = c.ix.epochImage(Epoch{Index: s.Epoch, Start: s.Start, End: s.End})
		c.epochs[s.Start] = m
	}
	return m
}

// Check mounts and walks each site and calls fn with its result, from the
// calling goroutine, in completion order. It stops early, returning the
// error, when ctx is cancelled or fn returns an error.
func (c *Checker) Check(ctx context.Context, sites []Site, fn func(Result) error) error {
	c.mu.Lock()
	if !c.started || c.closed || c.fs == nil {
		c.mu.Unlock()
		return errClosed
	}
	c.mu.Unlock()
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan Site)
	results := make(chan Result)
	var wg sync.WaitGroup
	for _, w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range todo {
				r := c.checkOne(w, s)
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(todo)
		for _, s := range sites {
			select {
			case todo <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	var ferr error
	for r := range results {
		if ferr != nil {
			continue
		}
		if err := fn(r); err != nil {
			ferr = err
			cancel()
		}
	}
	if ferr != nil {
		return ferr
	}
	return ctx.Err()
}

func (c *Checker) checkOne(w *checkWorker, s Site) Result {
	t0 := time.Now()
	r := Result{Site: s}
	if err := c.swap(w, s); err != nil {
		r.Err = err
		return r
	}
	flags, data := c.Log.FS.crashMount()
	if err := mountFS(w.loop.Path, w.mnt, c.Log.FS, flags, data); err != nil {
		r.Err = err
	} else {
		r.Snapshot, r.Err = c.Walk(w.mnt)
		if err := unmountFS(w.mnt); err != nil && r.Err == nil {
			r.Err = err
		}
	}
	// The next site must not see this image's blocks.
	if err := w.loop.dropCaches(); err != nil && r.Err == nil {
		r.Err = err
	}
	r.Duration = time.Since(t0)
	return r
}

// swap makes the worker's file serve site s.
func (c *Checker) swap(w *checkWorker, s Site) error {
	v := c.ix.newView(s, c.epochImage(s))
	if err := c.invalidate(w, v); err != nil {
		return err
	}
	w.file.set(v)
	w.prev = v
	return nil
}

// invalidate drops the kernel's cached pages of the worker's file where
// the previous view and the next one can differ: the sectors the previous
// mount wrote (its scratch overlay) and the sectors written by any log
// entry between the two sites' prefixes and epoch ends. Everywhere else
// both views resolve to the same log version or the base image.
func (c *Checker) invalidate(w *checkWorker, next *cowView) error {
	prev := w.prev
	if prev == nil {
		return nil
	}
	const pageSectors = 4096 / SectorSize
	pages := map[int64]bool{}
	for _, s := range prev.scratchSectors() {
		pages[s/pageSectors] = true
	}
	lo, hi := min(prev.prefix, next.prefix), max(prev.end, next.end)
	for i := lo; i < hi; i++ {
		for _, x := range c.ix.sectors[i] {
			pages[x.sector/pageSectors] = true
		}
	}
	sorted := make([]int64, 0, len(pages))
	for p := range pages {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[j-1]+1 {
			j++
		}
		if err := c.fs.invalidate(w.idx, sorted[i]*4096, (sorted[j-1]-sorted[i]+1)*4096); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Close detaches the loop devices, unmounts the FUSE server and removes the
// runtime directory. Safe to call twice and after a failed Start.
func (c *Checker) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.releaseLocked()
}

func (c *Checker) releaseLocked() error {
	if c.closed {
		return nil
	}
	c.closed = true
	// Unregistered only once its directory is gone: until then another
	// object's Close must not take the runtime dir for idle and remove it
	// under this one.
	var errs []error
	for _, w := range c.workers {
		// A worker interrupted mid-site may have left its mount behind.
		if err := unmountFS(w.mnt); err != nil {
			errs = append(errs, err)
		}
		if err := w.loop.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.fs.Close(); err != nil {
		errs = append(errs, err)
	}
	if c.objDir != "" {
		if err := removeObjectDir(c.objDir); err != nil {
			errs = append(errs, err)
		}
	}
	unregister(c)
	if err := removeRuntimeDirIfIdle(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
