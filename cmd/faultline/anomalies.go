//go:build !front

package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/faultline/faultline/anomalies"
)

// anomaliesCmd is `faultline anomalies [NAME]`: the catalogue.
type anomaliesCmd struct {
	Args struct {
		Name string `positional-arg-name:"NAME" description:"Print the full explanation of this anomaly."`
	} `positional-args:"yes"`
}

func (c *anomaliesCmd) Run() error {
	if c.Args.Name == "" {
		w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
		for _, a := range anomalies.All() {
			fmt.Fprintf(w, "%s\t%s\n", a.Name, a.Summary)
		}
		if err := w.Flush(); err != nil {
			return toolError("writing standard output: %w", err)
		}
		return nil
	}
	a, ok := anomalies.Lookup(c.Args.Name)
	if !ok {
		msg := fmt.Sprintf("no anomaly named %q", c.Args.Name)
		if s := anomalies.Suggest(c.Args.Name); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, ", ") + "?"
		}
		return toolError("%s (list them with 'faultline anomalies')", msg)
	}
	if _, err := fmt.Print(a.Explain()); err != nil {
		return toolError("writing standard output: %w", err)
	}
	return nil
}
