//go:build !front

package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// progress is one bar on the terminal over a long command's work: a label
// (the crash stage, or the check that just finished), done of total, and
// the time spent. A nil *progress (stderr is not a terminal) draws nothing.
type progress struct {
	container *mpb.Progress
	bar       *mpb.Bar

	mu    sync.Mutex
	label string
}

func newProgress(label string) *progress {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	p := &progress{label: label}
	p.container = mpb.New(mpb.WithOutput(os.Stderr), mpb.WithWidth(30), mpb.WithRefreshRate(100*time.Millisecond))
	// A total of 0 at creation: the bar completes only in finish, however
	// the counts move (an audit learns its total as it goes).
	p.bar = p.container.AddBar(0,
		mpb.PrependDecorators(
			decor.Any(func(decor.Statistics) string { return p.currentLabel() }),
			decor.CountersNoUnit(" %d/%d"),
		),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)),
		mpb.BarRemoveOnComplete(),
	)
	return p
}

func (p *progress) currentLabel() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%-40.40s", p.label)
}

// update says how far the work is.
func (p *progress) update(label string, done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.label = label
	p.mu.Unlock()
	p.bar.SetTotal(int64(total), false)
	p.bar.SetCurrent(int64(done))
}

// finish removes the bar and waits until it is gone from the terminal.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.bar.SetTotal(-1, true)
	p.container.Wait()
}
