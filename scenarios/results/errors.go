package results

import (
	"errors"
)

// ErrUsage is wrapped by every error about a plan that cannot be run as
// written (a bad count, a target that cannot play the story).
var ErrUsage = errors.New("usage")
