// Package supervisor runs programs in faultline's sandbox, traced, and
// replays edited traces against them under the replay contract of
// DESIGN.md: same world, lockstep per thread, the trace decides the
// result, inserted lines performed, divergence recorded and the run
// continued, one outcome class.
//
// # API
//
//	sb := &supervisor.Sandbox{Dir: "/work/box", Init: "testdata/world", Umask: -1}
//	err := sb.Open(ctx)            // mount (tmpfs, or FS: "ext4" for the recording RAM disk), populate
//	defer sb.Close()               // always: unmounts, detaches, removes what it made
//
//	// A live traced run (faultline record --init/--setup; the crash check's run):
//	run := &supervisor.Run{Sandbox: sb, Path: "mv", Args: []string{"mv", "a", "d/"},
//		Output: f, Tool: "faultline 0.1",
//		OnPosition: rec.SetPosition,                      // at each call's entry: its line number
//		AfterCall: func(l *parser.Line, pos int64) {...}, // paused after each call: walk sb.HostDir()
//	}
//	err = run.Run(ctx)
//
//	// A replay (faultline replay; crash check over a trace with inserted flushes):
//	rep, err := (&supervisor.Replay{Trace: t, Sandbox: sb /* or nil: from the header */,
//		Timeout: 10 * time.Second, OnPosition: ..., AfterCall: ...}).Run(ctx)
//	// err is a *WorldError when the program diverged before any injection
//	// (exit 2); otherwise rep.Outcome, rep.Divergence, rep.Injections,
//	// rep.Findings; rep.ExitCode() is 0 when handled, 1 when not;
//	// rep.Save(traceFile) writes TRACE.replay.strace and TRACE.replay.json.
//
// With a Sandbox on the recording RAM disk (FS "ext4", "xfs", "btrfs"),
// Run and Replay call Recorder().StartLogging() right before the program
// starts and Finish (sync + unmount, log still recording) after it ends;
// the caller reads sb.Recorder().Log() and closes the sandbox.
//
// # Sandbox
//
// The file system is mounted in faultline's namespace below
// /run/faultline/<pid>/ (blockrec.RuntimeDir; blockrec.CleanupStale
// removes what a killed run left there) and shown to the program at
// Sandbox.Dir in a private mount namespace that the tracing thread
// unshares before forking (tracer.Cmd.Prepare) and that dies with it.
//
// # Trace header
//
// Besides the tracer's header (command, path, cwd, one "# env:" line per
// variable, identity with umask, options, traced calls) a sandboxed trace
// carries "# sandbox-fs:", "# sandbox-dir:", "# sandbox-init:",
// "# sandbox-setup:", "# sandbox-user:" (values Go-quoted), and a mutated
// one "# anomaly: NAME". ParseHeader reads them back.
//
// # Outcomes
//
// unhandled, handled-error, recovered, crashed, hung as DESIGN.md says,
// and none for a replay in which nothing was injected and nothing
// diverged (an unedited trace, or one with only benign inserted flushes).
// A program killed by an inserted "+++ killed by SIGKILL +++" is crashed
// with KilledAsInjected set, and counts as handled.
//
// The package must not: print (the command does), decide what a crash
// state means (package oracle), edit traces (package mutators), or
// leave anything mounted, attached or traced on any return path.
package supervisor
