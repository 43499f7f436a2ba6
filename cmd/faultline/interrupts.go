package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interrupts is faultline's one handler of Ctrl-C, SIGTERM and SIGHUP.
// The first cancels the context the command runs under: the tracee is
// killed (or detached from, with -p), sandboxes are unmounted, the trace
// so far is kept. Later ones are caught too, so a second Ctrl-C cannot
// cut that cleanup short and leave a mount or a stopped process behind.
type interrupts struct {
	ctx   context.Context
	armed chan struct{}
}

// catchInterrupts installs the handlers in the background. os/signal
// starts two threads and hands each signal to one of them in turn, about
// a millisecond on a small VM; done while the flags are parsed, it no
// longer delays the start of every recording.
func catchInterrupts() *interrupts {
	ctx, cancel := context.WithCancelCause(context.Background())
	in := &interrupts{ctx: ctx, armed: make(chan struct{})}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		close(in.armed)
		s := <-ch
		cancel(fmt.Errorf("interrupted by %v", s))
		for range ch {
		}
	}()
	return in
}

// context is the context commands run under, returned once the handlers
// are in place: before that a signal would kill faultline outright, so a
// command asks for it before it starts anything it must clean up.
func (in *interrupts) context() context.Context {
	<-in.armed
	return in.ctx
}
