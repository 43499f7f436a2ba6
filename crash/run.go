package crash

import (
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/tracer"
)

// runTraced runs one traced run of the program under the check's time
// limit; what names the run in errors ("profiling run", "replay").
func (c *Check) runTraced(ctx context.Context, cmd *tracer.Cmd, what string) error {
	runCtx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	err := cmd.Run(runCtx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tracer.ErrNotFound):
		return fmt.Errorf("%s: %w", c.Argv[0], err)
	case runCtx.Err() != nil && ctx.Err() == nil:
		return fmt.Errorf("%s of %s: timed out after %s", what, c.Argv[0], c.timeout())
	}
	return fmt.Errorf("%s of %s: %w", what, c.Argv[0], err)
}
