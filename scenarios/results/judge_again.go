package results

import "fmt"

// ErrCannotJudge is wrapped by the errors that keep a saved result from
// being judged again for want of something the command line can give (a
// race file that is not where the result says): a usage error, exit 2,
// not a damaged result.
var ErrCannotJudge = fmt.Errorf("cannot judge again%.0w", ErrUsage)
