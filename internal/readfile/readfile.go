package readfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// ErrFolder is the error for a name that is a folder, not a file.
var ErrFolder = errors.New("is a folder")

// TooLargeError is a file past its limit. Size is its size when known
// before reading (a regular file), else 0: only the limit was read.
type TooLargeError struct {
	Name  string
	Limit int64
	Size  int64
}

func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s: %s, over the limit of %s", e.Name, Bytes(e.Size), Bytes(e.Limit))
	}
	return fmt.Sprintf("%s: over the limit of %s", e.Name, Bytes(e.Limit))
}

// Bytes writes a size in the largest binary unit that keeps it whole
// enough to read: "256 MiB", "1.5 KiB", "1.91 MiB", "12 bytes".
func Bytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f, u = f/1024, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.3g %s", f, units[u])
}

// File is a file opened with a limit: reading past it is a
// *TooLargeError, and reading after the context is done its error.
type File struct {
	f     *os.File
	ctx   context.Context
	name  string
	limit int64
	read  int64
	stop  func() bool
}

// Open opens name for reading at most limit bytes. It refuses a folder
// (ErrFolder) and a regular file larger than limit (*TooLargeError)
// without reading them; a file that is not there is an error wrapping
// fs.ErrNotExist. An open that waits (a FIFO without a writer) and every
// later read end when ctx is done, with ctx's error.
func Open(ctx context.Context, name string, limit int64) (*File, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err // *fs.PathError names the file
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s: %w", name, ErrFolder)
	case fi.Mode().IsRegular() && fi.Size() > limit:
		return nil, &TooLargeError{Name: name, Limit: limit, Size: fi.Size()}
	}
	var f *os.File
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openFIFO(ctx, name)
	} else {
		f, err = os.Open(name)
	}
	if err != nil {
		return nil, err
	}
	// A pipe, a FIFO or a terminal is read through Go's poller, where a
	// deadline in the past ends a read that waits; a regular file or
	// /dev/zero answers at once, and Read looks at ctx before each read.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return &File{f: f, ctx: ctx, name: name, limit: limit, stop: stop}, nil
}

// openFIFO opens a FIFO, whose open waits for a writer, in a goroutine;
// when ctx is done first, it opens the FIFO as a writer itself, which
// lets the waiting open return, and closes both.
func openFIFO(ctx context.Context, name string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		// Without a reader waiting yet (the goroutine has not reached its
		// open), a writer's non-blocking open fails: try again.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case o := <-done:
			if o.f != nil {
				o.f.Close()
			}
			return nil, fmt.Errorf("%s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// Read reads up to len(p) bytes; past the limit it fails with a
// *TooLargeError, and once ctx is done with ctx's error.
func (r *File) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", r.name, err)
	}
	if r.read > r.limit {
		return 0, &TooLargeError{Name: r.name, Limit: r.limit}
	}
	// One byte past the limit is read to tell "exactly the limit" from
	// "more".
	if left := r.limit + 1 - r.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.f.Read(p)
	r.read += int64(n)
	if r.read > r.limit {
		return n - int(r.read-r.limit), &TooLargeError{Name: r.name, Limit: r.limit}
	}
	if err != nil && r.ctx.Err() != nil {
		return n, fmt.Errorf("%s: %w", r.name, r.ctx.Err())
	}
	return n, err
}

// Close closes the file.
func (r *File) Close() error {
	r.stop()
	return r.f.Close()
}

// ReadAll reads the whole of name, at most limit bytes, as Open and Read
// do.
func ReadAll(ctx context.Context, name string, limit int64) ([]byte, error) {
	f, err := Open(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
