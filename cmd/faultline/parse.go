//go:build !front

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/faultline/faultline/parser"
)

// parseCmd is `faultline parse`: validate traces, optionally as JSON events.
type parseCmd struct {
	JSON bool `long:"json" description:"Print one JSON object per line of the trace."`
	Args struct {
		Files []string `positional-arg-name:"FILE" required:"1" description:"Trace files (- for standard input)."`
	} `positional-args:"yes"`
}

func (c *parseCmd) Run() error {
	tuneGC()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	enc := json.NewEncoder(out)
	bad := 0
	for _, name := range c.Args.Files {
		n, err := scanFile(name, func(l *parser.Line) error {
			if c.JSON {
				return enc.Encode(l)
			}
			return nil
		}, func(se *parser.SyntaxError) error {
			fmt.Fprintln(os.Stderr, se)
			return nil
		})
		if err != nil {
			out.Flush()
			return toolError("%w", err)
		}
		bad += n
	}
	if err := out.Flush(); err != nil {
		return toolError("writing output: %w", err)
	}
	if bad > 0 {
		return &exitError{code: exitFinding, err: fmt.Errorf("%d malformed line(s)", bad)}
	}
	return nil
}

// scanFile streams one trace file through the parser and returns the number
// of malformed lines. An unreadable file is an error (exit 2).
func scanFile(name string, good func(*parser.Line) error, bad func(*parser.SyntaxError) error) (int, error) {
	f := os.Stdin
	if name != "-" {
		var err error
		if f, err = os.Open(name); err != nil {
			return 0, err
		}
		defer f.Close()
	}
	n := 0
	s := &parser.Scanner{File: name}
	err := s.Scan(context.Background(), f, func(l *parser.Line, err error) error {
		var se *parser.SyntaxError
		switch {
		case err == nil:
			return good(l)
		case errors.As(err, &se):
			n++
			return bad(se)
		default:
			return err
		}
	})
	return n, err
}

// tuneGC trades memory for speed while streaming a trace: the parser's
// garbage is short-lived and its live set is a few batches of lines, so a
// larger heap target costs a few megabytes and saves most GC work.
func tuneGC() { debug.SetGCPercent(400) }
