package results

import "github.com/racelab/racelab/internal/usage"

// ErrUsage is wrapped by every error about a plan that cannot be run as
// written (a bad count, a target that cannot play the story).
var ErrUsage = usage.Err
