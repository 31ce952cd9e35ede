package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/internal/usage"
)

// ReadFile reads the saved documents in the file called name, or in
// stdin for "-", through v. A file that is not there is a usage error;
// one that cannot be read, or holds no result, is not.
//
// It gives up when ctx is done: a stalled pipe or FIFO (whose very open
// blocks until a writer comes) must not hold the command past Ctrl-C or
// SIGTERM. The blocked read cannot be interrupted; its goroutine ends with
// the process.
func ReadFile(ctx context.Context, stdin io.Reader, name string, v Verifier) (Saved, error) {
	type read struct {
		rs  Saved
		err error
	}
	done := make(chan read, 1)
	go func() {
		rs, err := readFileNow(ctx, stdin, name, v)
		done <- read{rs, err}
	}()
	select {
	case got := <-done:
		return got.rs, got.err
	case <-ctx.Done():
		return Saved{}, fmt.Errorf("%s: %w", name, ctx.Err())
	}
}

// readFileNow reads a named file through readfile, which refuses a file
// too large by its size before reading it and stops a waiting read when
// ctx is done; standard input is only bounded.
func readFileNow(ctx context.Context, stdin io.Reader, name string, v Verifier) (Saved, error) {
	if name == "-" {
		rs, err := ReadSaved(stdin, v)
		if err != nil {
			return Saved{}, fmt.Errorf("standard input: %w", err)
		}
		return rs, nil
	}
	f, err := readfile.Open(ctx, name, MaxResultBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Saved{}, fmt.Errorf("%s: no such file%.0w", name, usage.Err)
	case errors.Is(err, readfile.ErrFolder):
		return Saved{}, fmt.Errorf("%s is a folder; want a result file%.0w", name, usage.Err)
	case err != nil:
		return Saved{}, err // it names the file, and the limit
	}
	defer f.Close()
	rs, err := ReadSaved(f, v)
	if err != nil && !errors.As(err, new(*readfile.TooLargeError)) {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return rs, err
}
