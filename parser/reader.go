package parser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
)

// Scanner streams a trace: lines are read in batches, parsed by one worker
// per core (lines are independent; only the joining of split calls needs
// order, and that happens after), and handed to the caller in file order.
// Memory is bounded by the batches in flight, not by the trace's length.
type Scanner struct {
	// File names the input in positions and errors.
	File string
	// Workers parse in parallel; 0 means one per core.
	Workers int
	// BatchLines is how many lines a worker takes at a time; 0 means 512.
	BatchLines int
}

// batch is a run of lines sharing one backing string, so reading costs one
// allocation per batch rather than one per line.
type batch struct {
	first int // number of the first line
	lines []string
	noEOL bool // the last line had no newline
	out   []*Line
	errs  []error
	done  chan struct{}
}

// Scan reads r to the end and calls fn for every line in order, with the
// parsed line or a *SyntaxError (then line is nil). An error from fn stops
// the scan and is returned; so is a read error, wrapped with the file name.
func (s *Scanner) Scan(ctx context.Context, r io.Reader, fn func(*Line, error) error) error {
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	per := s.BatchLines
	if per <= 0 {
		per = 512
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan *batch, workers)
	ordered := make(chan *batch, workers*2)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				s.parseBatch(b)
				close(b.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(work)
		readErr <- s.split(ctx, r, per, func(b *batch) bool {
			select {
			case ordered <- b:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- b:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()

	var ferr error
	for b := range ordered {
		<-b.done
		if ferr != nil {
			continue // drain so the reader and workers can finish
		}
		for i, l := range b.out {
			if err := fn(l, b.errs[i]); err != nil {
				ferr = err
				cancel()
				break
			}
		}
	}
	wg.Wait()
	if ferr != nil {
		return ferr
	}
	if err := <-readErr; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("reading %s: %w", s.name(), err)
	}
	return ctx.Err()
}

func (s *Scanner) name() string {
	if s.File == "" {
		return "<input>"
	}
	return s.File
}

func (s *Scanner) parseBatch(b *batch) {
	b.out = make([]*Line, len(b.lines))
	b.errs = make([]error, len(b.lines))
	for i, text := range b.lines {
		l, err := ParseLine(s.File, b.first+i, text)
		if err != nil {
			b.errs[i] = err
			continue
		}
		if b.noEOL && i == len(b.lines)-1 {
			l.NoEOL = true
		}
		b.out[i] = l
	}
}

// split cuts r into batches of whole lines.
func (s *Scanner) split(ctx context.Context, r io.Reader, per int, emit func(*batch) bool) error {
	const chunk = 256 << 10
	buf := make([]byte, 0, chunk)
	next := 1
	eof := false
	for !eof {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Fill until the buffer holds per lines or the input ends.
		for bytes.Count(buf, []byte{'\n'}) < per && !eof {
			if len(buf) == cap(buf) {
				nb := make([]byte, len(buf), 2*cap(buf))
				copy(nb, buf)
				buf = nb
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return err
			}
		}
		cut := len(buf)
		if !eof {
			cut = bytes.LastIndexByte(buf, '\n') + 1
		}
		if cut == 0 {
			continue
		}
		text := string(buf[:cut])
		rest := copy(buf, buf[cut:])
		buf = buf[:rest]
		b := &batch{first: next, done: make(chan struct{})}
		b.lines = strings.Split(text, "\n")
		if strings.HasSuffix(text, "\n") {
			b.lines = b.lines[:len(b.lines)-1]
		} else {
			b.noEOL = true
		}
		next += len(b.lines)
		if !emit(b) {
			return ctx.Err()
		}
	}
	return nil
}
