//go:build !front

package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/faultline/faultline/parser"
)

// fmtCmd is `faultline fmt`: print a trace back through the AST.
type fmtCmd struct {
	Canonical bool `long:"canonical" description:"Print every line in strace's own spacing instead of keeping the file's."`
	Args      struct {
		File string `positional-arg-name:"FILE" required:"yes" description:"Trace file (- for standard input)."`
	} `positional-args:"yes"`
}

func (c *fmtCmd) Run() error {
	tuneGC()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	n, err := scanFile(c.Args.File, func(l *parser.Line) error {
		if c.Canonical {
			l.Raw = ""
		}
		return parser.Fprint(out, l)
	}, func(se *parser.SyntaxError) error {
		fmt.Fprintln(os.Stderr, se)
		_, err := fmt.Fprintln(out, se.Text) // keep the file whole
		return err
	})
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	if err != nil {
		return toolError("%w", err)
	}
	if n > 0 {
		return &exitError{code: exitFinding, err: fmt.Errorf("%d malformed line(s)", n)}
	}
	return nil
}
