//go:build !front

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// mutateCmd is `faultline mutate`: write a catalogue anomaly into a trace.
type mutateCmd struct {
	Anomaly string     `long:"anomaly" value-name:"NAME" description:"Name of the anomaly (see 'faultline anomalies')."`
	Select  []string   `long:"select" value-name:"EXPR" description:"Which calls to change: key=value pairs joined by commas (syscall=NAME|%CLASS, path=GLOB, fd=N, pid=N, nth=N, all). Repeat for several; a call is changed when any selects it."`
	Amplify []string   `long:"amplify" value-name:"KIND" choice:"sync" choice:"sync-wide" choice:"commit" description:"Also insert test-amplification calls: sync (sync() after truncating calls), sync-wide (also after opens for writing, unlinks and large writes), commit (fsync of the directory after metadata calls)."`
	Output  string     `short:"o" long:"output" value-name:"OUT" description:"Write the edited trace here (atomically) instead of standard output."`
	Args    mutateArgs `positional-args:"yes"`
}

type mutateArgs struct {
	Trace string `positional-arg-name:"TRACE" required:"yes" description:"Trace file (- for standard input)."`
}

func (c *mutateCmd) Run() error {
	if c.Anomaly == "" && len(c.Amplify) == 0 {
		return toolError("mutate: give --anomaly NAME (see 'faultline anomalies') or --amplify KIND")
	}
	var a *anomalies.Anomaly
	if c.Anomaly != "" {
		var ok bool
		if a, ok = anomalies.Lookup(c.Anomaly); !ok {
			msg := fmt.Sprintf("--anomaly: no anomaly named %q", c.Anomaly)
			if s := anomalies.Suggest(c.Anomaly); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, ", ") + "?"
			}
			return toolError("%s (list them with 'faultline anomalies')", msg)
		}
	}
	sels := make([]mutators.Selector, 0, len(c.Select))
	for _, s := range c.Select {
		sel, err := mutators.ParseSelector(s)
		if err != nil {
			return toolError("--select: %w", err)
		}
		sels = append(sels, sel)
	}
	t, err := readTrace(c.Args.Trace)
	if err != nil {
		return toolError("%w", err)
	}
	if a != nil {
		if t, err = a.Apply(t, sels...); err != nil {
			var nm *mutators.NoMatchError
			if errors.As(err, &nm) {
				return toolError("--select: %w", err)
			}
			return toolError("%w", err)
		}
	}
	for _, kind := range c.Amplify {
		m := map[string]*mutators.Mutation{
			"sync": mutators.SyncPoints(false), "sync-wide": mutators.SyncPoints(true), "commit": mutators.CommitPoints(),
		}[kind]
		// Amplification over a whole trace: with --anomaly the selectors
		// are the anomaly's, so amplification is not narrowed by them.
		asels := sels
		if a != nil {
			asels = nil
		}
		if t, err = mutators.Apply(t, m, asels...); err != nil {
			return toolError("--amplify %s: %w", kind, err)
		}
	}
	var buf bytes.Buffer
	if err := t.Write(&buf); err != nil {
		return toolError("formatting the trace: %w", err)
	}
	if c.Output == "" {
		if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
			return toolError("writing standard output: %w", err)
		}
		return nil
	}
	if err := writeAtomic(c.Output, buf.Bytes()); err != nil {
		return toolError("%w", err)
	}
	return nil
}

// readTrace reads a whole trace file; a malformed line is reported with its
// file:line:col.
func readTrace(name string) (*mutators.Trace, error) {
	f := os.Stdin
	if name != "-" {
		var err error
		if f, err = os.Open(name); err != nil {
			return nil, err
		}
		defer f.Close()
	}
	return mutators.Read(name, f)
}

// writeAtomic writes data so that a crash leaves either the old file or
// the new one: a temporary file in the same directory, fsynced, renamed
// over the target, and the directory fsynced so the rename is durable.
func writeAtomic(name string, data []byte) (err error) {
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmp.Name(), name, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
