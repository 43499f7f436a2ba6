package main

// recordCmd is `faultline record`; the tracer work (issue 3) fills it in.
type recordCmd struct{}

func (r *recordCmd) Run() error { return toolError("record: not built yet") }
