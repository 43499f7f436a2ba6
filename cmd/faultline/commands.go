//go:build !front

package main

// commands is the command tree, in the order help lists it.
func commands() []command {
	return []command{
		{"parse", "Check that trace files are valid strace output.", false, &parseCmd{}},
		{"fmt", "Print a trace back through the parser.", false, &fmtCmd{}},
		recordCommand(),
		{"replay", "Replay a program against an (edited) trace and say how it coped.", false, &replayCmd{}},
		{"mutate", "Apply an anomaly from the catalogue to a trace.", false, &mutateCmd{}},
		{"anomalies", "List the anomaly catalogue with explanations.", false, &anomaliesCmd{}},
		{"suite", "Run a suite file: checks with expected outcomes, as CI does.", false, &suiteCmd{}},
		{"audit", "Try every applicable anomaly and the crash check on a program; list the findings.", true, &auditCmd{}},
		{"blocklog", "Print a saved block log (writes and flushes with their trace positions).", false, &blocklogCmd{}},
		{"crash", "Check that every state a crash can leave the program's files in can be recovered.", true, &crashCmd{}},
	}
}

// handOff is where the front end (front.go) passes a command on to the
// full binary; this is the full binary, which runs every command itself.
func handOff(args []string, parsed any) func() int { return nil }
