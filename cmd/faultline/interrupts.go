package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts is faultline's one handler of Ctrl-C, SIGTERM and SIGHUP,
// for the commands that start something they must clean up (record,
// replay, crash, suite, audit). The first signal cancels the context the
// command runs under: the tracee is killed (or detached from, with -p),
// sandboxes are unmounted, the trace so far is kept. Later ones are
// caught too, so a second Ctrl-C cannot cut that cleanup short and leave
// a mount or a stopped process behind. Commands that never ask for the
// context (parse, fmt) keep the default: Ctrl-C ends them at once.
type interrupts struct {
	once sync.Once
	ctx  context.Context
}

// context installs the handlers on first use and returns the context
// they cancel. A command asks for it before it starts anything it must
// clean up: until then a signal ends faultline outright.
func (in *interrupts) context() context.Context {
	in.once.Do(func() {
		ctx, cancel := context.WithCancelCause(context.Background())
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			s := <-ch
			cancel(fmt.Errorf("interrupted by %v", s))
			for range ch {
			}
		}()
		in.ctx = ctx
	})
	return in.ctx
}
