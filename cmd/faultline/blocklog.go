//go:build !front

package main

import (
	"bufio"
	"os"

	"github.com/faultline/faultline/blockrec"
)

// blocklogCmd is `faultline blocklog`: print a saved block log for
// inspection, one write or flush per line with the trace position it
// happened at.
type blocklogCmd struct {
	Args struct {
		File string `positional-arg-name:"FILE" required:"yes" description:"Block log saved by a recording run."`
	} `positional-args:"yes"`
}

func (c *blocklogCmd) Run() error {
	l, err := blockrec.LoadLog(c.Args.File)
	if err != nil {
		return toolError("blocklog: %w", err)
	}
	out := bufio.NewWriter(os.Stdout)
	if err := blockrec.WriteLogText(out, l); err != nil {
		return toolError("blocklog: %w", err)
	}
	if err := out.Flush(); err != nil {
		return toolError("blocklog: writing output: %w", err)
	}
	return nil
}
