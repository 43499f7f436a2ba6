//go:build front

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/faultline/faultline/tracer"
)

// The front end. `make build` makes two binaries from this package:
// bin/faultline-full, every command (the default build, what `go install`
// makes), and bin/faultline, built with -tags front: record alone, linked
// without the recording disk, the crash oracle, the suite runner and their
// libraries. A Go binary initialises every package it links before main
// runs; on a small VM those other commands' packages (go-fuse, the
// progress bars, TOML, diff parsing) cost about 2 ms of every start, and
// record of a short program pays that in full against strace
// (scripts/bench-record.sh, the start row). Everything else is handed to
// faultline-full by exec, with the same arguments: same pid, same exit
// status, same signals.

// fullName is the binary the front end hands off to, looked up next to
// the front end first, then on PATH.
const fullName = "faultline-full"

// commands is what the front end runs itself.
func commands() []command {
	return []command{recordCommand()}
}

// handOff returns how to run args elsewhere when this binary should not
// run them: any command but record (help and mistakes included), and a
// record in a sandbox, which needs the recording disk. It is asked before
// parsing (parsed nil) and again after, with the parsed command.
func handOff(args []string, parsed any) func() int {
	switch c := parsed.(type) {
	case nil:
		if len(args) > 0 && args[0] == "record" {
			return nil
		}
	case *recordCmd:
		if c.Init == "" && c.Setup == "" {
			return nil
		}
	default:
		return nil
	}
	return func() int { return execFull(args) }
}

// execFull replaces this process with faultline-full running args.
func execFull(args []string) int {
	path, err := findFull()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultline:", err)
		return exitTool
	}
	argv := append([]string{"faultline"}, args...)
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "faultline: run %s: %v\n", path, err)
	return exitTool
}

func findFull() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), fullName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(fullName)
	if err != nil {
		return "", fmt.Errorf("this is faultline's front end, which runs only record; the other commands are in %s, which is neither next to it nor on PATH (make build makes both)", fullName)
	}
	return p, nil
}

// runSandboxed is not reached in the front end: handOff passes a record
// with --init or --setup on before it runs.
func (r *recordCmd) runSandboxed(ctx context.Context, c *tracer.Cmd, out *output) error {
	return toolError("record: %w", errors.New("--init and --setup are run by "+fullName))
}
