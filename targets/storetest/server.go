package storetest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SkipLogVar names a file to which every real-server test that skips
// appends one line, "<package folder>\t<why>", so that `make test`, whose
// plain go test shows nothing of a package that passed (not its skips, nor
// what its TestMain prints), can say after the run which packages skipped
// how many tests and why.
const SkipLogVar = "RACELAB_SKIP_LOG"

// Server is the real server one store package's tests run against, and how
// they open a store of type S with a configuration of type C on it.
type Server[C any, S io.Closer] struct {
	// EnvVar names the server's URL, e.g. RACELAB_REDIS_URL.
	EnvVar string
	// DefaultURL is the server .ci/services starts, used when EnvVar is
	// unset.
	DefaultURL string
	// Unreachable is wrapped by Open's error when no server answers.
	Unreachable error
	// Open opens a store on the server at url with cfg.
	Open func(ctx context.Context, url string, cfg C) (S, error)
}

// URL is the test server's URL: EnvVar's value, or DefaultURL.
func (sv Server[C, S]) URL() string { return URL(sv.EnvVar, sv.DefaultURL) }

// Store opens a store with cfg on the test server and closes it when the
// test ends. A server that does not answer skips the test, except under
// CI=true, where it fails it (see Unreachable); any other error fails it.
func (sv Server[C, S]) Store(tb testing.TB, cfg C) S {
	tb.Helper()
	return OpenServer(tb, sv.EnvVar, sv.DefaultURL, sv.Unreachable, func(ctx context.Context, url string) (S, error) {
		return sv.Open(ctx, url, cfg)
	})
}

// URL is the test server's URL: the value of envVar, or def, the server
// .ci/services starts.
func URL(envVar, def string) string {
	if u := os.Getenv(envVar); u != "" {
		return u
	}
	return def
}

// Unreachable ends a test whose server did not answer with err. It skips
// the test, saying how to start the server, except under CI=true, where it
// fails it: CI starts the server, so its absence there is a bug. A skip is
// also logged to the file SkipLogVar names, when it is set.
func Unreachable(tb testing.TB, envVar string, err error) {
	tb.Helper()
	msg := err.Error()
	if !strings.Contains(msg, envVar) { // unless err says how already
		msg += "; start it with make services or set " + envVar
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	if lerr := logSkip(msg); lerr != nil {
		tb.Logf("%s: %v", SkipLogVar, lerr)
	}
	tb.Skip("skipped: " + msg)
}

// logSkip appends one line for a skipped test to the file SkipLogVar
// names, if any. Packages run at once append to the same file; each line
// is one write to a file opened for appending, so lines do not interleave.
func logSkip(why string) error {
	path := os.Getenv(SkipLogVar)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	line := packageFolder() + "\t" + strings.ReplaceAll(why, "\n", " ") + "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// packageFolder is the folder of the package under test relative to its
// module's root ("targets/redis"): go test runs a test binary in its
// package's folder. It is the folder itself when no go.mod is found above.
func packageFolder() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return filepath.ToSlash(rel)
			}
			return wd
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// OpenServer opens a store on the test server, envVar's or def, with open,
// and closes it when the test ends. An error that wraps unreachable ends the
// test as Unreachable does; any other error fails it.
func OpenServer[S io.Closer](tb testing.TB, envVar, def string, unreachable error, open func(ctx context.Context, url string) (S, error)) S {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := open(ctx, URL(envVar, def))
	if errors.Is(err, unreachable) {
		Unreachable(tb, envVar, err)
	}
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}
