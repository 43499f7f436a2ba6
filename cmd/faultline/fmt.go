package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/faultline/faultline/parser"
)

// fmtCmd is `faultline fmt`: print a trace back through the AST.
type fmtCmd struct {
	Canonical bool   `help:"Print every line in strace's own spacing instead of keeping the file's."`
	File      string `arg:"" help:"Trace file (- for standard input)." type:"path"`
}

func (c *fmtCmd) Run() error {
	tuneGC()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	n, err := scanFile(c.File, func(l *parser.Line) error {
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
