// Package crash is faultline's one-button crash-consistency check (C³):
// given a program and its input it reports every crash state a user could
// not recover from, or certifies the run.
//
// It owns the pipeline: the sandbox on a recording disk populated from an
// init directory or a setup command; the profiling run that snapshots the
// sandbox after each metadata call (the expected snapshots); test
// amplification (sync points and commit points, inserted into the trace by
// package mutators); the recorded re-run of the amplified trace that
// performs the inserted lines; crash-site generation and checking
// (package blockrec) judged by the generic oracle (package oracle); kill
// points; and turning inconsistent sites into explained, grouped findings
// with artifacts.
//
// It must not print anything (the command renders the report), decide
// exit statuses, or leave anything mounted, attached or traced behind: every
// disk it mounts is closed before Run returns, on every path.
package crash
