package suite_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/suite"
)

// A Go project drives faultline from its own tests: the program, its
// world, the checks and what each must come out as, run in parallel
// sandboxes. (Needs root, as faultline does.)
func Example() {
	if os.Geteuid() != 0 {
		fmt.Println("faultline needs root: mount namespaces, loop devices, FUSE, ptrace")
		return
	}
	sel, err := mutators.ParseSelector("syscall=renameat2")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := &suite.Suite{
		Name: "mv within one file system",
		Program: suite.Program{
			Command: []string{"mv", "a", "dir/b"},
			Setup:   "echo precious > a && mkdir dir",
			Timeout: 20 * time.Second,
		},
		Checks: []*suite.Check{
			{Name: "rename-exdev", Kind: suite.KindAnomaly, Anomaly: "rename-exdev",
				Select: []mutators.Selector{sel}, Expect: suite.Recovered},
			{Name: "crash", Kind: suite.KindCrash, Expect: suite.Consistent},
		},
	}
	r := &suite.Runner{Engine: &suite.Faultline{Tool: "faultline example"}}
	rep, err := r.Run(context.Background(), s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, res := range rep.Results {
		verdict := "as expected"
		if !res.OK {
			verdict = "UNEXPECTED: " + res.Detail
		}
		fmt.Printf("%s: %s (%s)\n", res.Check, res.Got, verdict)
	}
	// Output:
	// rename-exdev: recovered (as expected)
	// crash: consistent (as expected)
}
