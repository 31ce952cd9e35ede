package burst

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// connection and read loop must be closed by the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
