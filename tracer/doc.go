// Package tracer runs a program under ptrace and writes what it asks of
// the kernel as strace text: the same lines strace 6.1 prints with -f for
// the same run, built as parser AST nodes and printed only by the parser's
// printer, so a recorded trace always parses.
//
// It owns: starting a command traced (or attaching to a pid), following
// forks, vforks, clones, threads and execve, signal and group stops and
// exits; reading tracee memory (process_vm_readv); decoding arguments
// (a syscall table of argument kinds, one small formatter per kind);
// the seccomp-bpf filter that keeps untraced calls from stopping the
// tracee; how the tracing thread waits for the next stop (spin.go); the
// confinement of a sandboxed program's sync() to its sandbox (syncfs.go);
// and a hook API (Hooks, Stop) through which the replay supervisor sees
// and changes each call at entry and exit.
//
// It must not: import anything of faultline's but parser; run ptrace from
// more than one OS thread (every ptrace request comes from the locked
// thread that started or attached the tracees); let a tracee outlive it
// (PTRACE_O_EXITKILL, and kills on cancellation); write files other than
// the Output it was given; or decide anything about replay, mutation or
// crash consistency.
package tracer
