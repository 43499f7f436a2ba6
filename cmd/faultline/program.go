package main

// programArgs are the positional arguments of a command that runs a
// program (record, audit, crash): the program and its own arguments. The
// command's flags come first; everything after --, or from the first word
// that is not one of them, is the program's (command.passthrough).
type programArgs struct {
	Cmd []string `positional-arg-name:"CMD" description:"The program and its arguments (after --, or from the first word that is not a flag)."`
}
