package tracer

import (
	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// The first execve happens before faultline can see its entry (the child
// runs PTRACE_TRACEME and execs at once), so its line is written from
// what the kernel left on the new stack: argc, argv, envp. strace prints
// the same line for the same run, with the path it resolved itself.
func (t *tracer) initialExec(p *tracee) {
	if !t.decode || !t.c.Filter.Has(unix.SYS_EXECVE) {
		return
	}
	var r Regs
	if err := ptraceGetRegs(p.tid, &r); err != nil {
		return
	}
	argc, err := readWord(p.tid, r.Rsp)
	if err != nil {
		return
	}
	argv := r.Rsp + 8
	envp := argv + 8*(argc+1)
	d := &dec{t: t, pid: p.tid, nr: unix.SYS_EXECVE, name: "execve", args: [6]uint64{0, argv, envp}}
	args := []*parser.Arg{
		parser.Positional(parser.Quoted([]byte(t.c.Path), parser.QuoteDefault, false)),
		kArgv.in(d, 1),
		kEnvp.in(d, 2),
	}
	t.write(t.line(p, parser.NewCall("execve", args, parser.Ret(parser.Dec(0)))))
}
