package readfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// neverBound is how long a test waits for a read that must end before it
// says the read hung: a bound on a hang, not a measure of speed.
const neverBound = 30 * time.Second

// A file of limit-1, limit and limit+1 bytes: the first two are read
// whole, the third refused by its size before a byte is read.
func TestReadAllAtTheLimit(t *testing.T) {
	const limit = 64
	dir := t.TempDir()
	for _, size := range []int{limit - 1, limit, limit + 1} {
		name := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte{'x'}, size)
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadAll(context.Background(), name, limit)
		var tl *TooLargeError
		switch {
		case size <= limit && (err != nil || !bytes.Equal(got, want)):
			t.Errorf("%d bytes: got %d bytes, %v; want them all", size, len(got), err)
		case size > limit && (!errors.As(err, &tl) || tl.Size != int64(size) || tl.Limit != limit || got != nil):
			t.Errorf("%d bytes: got %d bytes, %v; want a *TooLargeError saying its size", size, len(got), err)
		}
	}
}

// An oversize regular file is refused by its size, not by reading it: a
// sparse file of 64 GiB, which would take minutes and all the memory to
// read, is refused at once, its size said.
func TestOversizeRefusedBeforeReading(t *testing.T) {
	name := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	err = ended(t, func() error { _, err := ReadAll(context.Background(), name, 1<<20); return err })
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 64<<30 {
		t.Fatalf("ReadAll = %v, want a *TooLargeError before any read", err)
	}
	if want := name + ": 64 GiB, over the limit of 1 MiB"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// /dev/zero never ends and has no size: it is cut at the limit.
func TestDevZeroStopsAtTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	got, err := ReadAll(context.Background(), "/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 0 || len(got) != 1<<20 {
		t.Fatalf("ReadAll(/dev/zero) = %d bytes, %v; want the limit, then a *TooLargeError", len(got), err)
	}
	if msg := err.Error(); msg != "/dev/zero: over the limit of 1 MiB" {
		t.Errorf("message %q", msg)
	}
}

// A cancelled context stops /dev/zero at the next read.
func TestDevZeroStopsOnCancel(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f, err := Open(ctx, "/dev/zero", 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	if _, err := f.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := f.Read(buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel = %v, want context.Canceled", err)
	}
}

func mkfifo(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	return name
}

// ended runs read and says what it returned, or fails the test if it
// never does.
func ended(t *testing.T, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		return err
	case <-time.After(neverBound):
		t.Fatal("the read never ended")
		return nil
	}
}

// A FIFO no one writes to: its open waits, and a cancel ends the wait.
func TestFIFOWithoutWriterStopsOnCancel(t *testing.T) {
	name := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := ended(t, func() error { _, err := ReadAll(ctx, name, 1<<20); return err })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), name) {
		t.Fatalf("ReadAll(FIFO) = %v, want context.Canceled naming the file", err)
	}
}

// A context cancelled before the open: it is not even waited for.
func TestFIFOAlreadyCancelled(t *testing.T) {
	name := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ended(t, func() error { _, err := ReadAll(ctx, name, 1<<20); return err }); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAll = %v, want context.Canceled", err)
	}
}

// A FIFO whose writer opens it, writes a little and stalls: the read
// waits in the middle, and a cancel ends it.
func TestStalledFIFOStopsOnCancel(t *testing.T) {
	name := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writer := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			writer <- nil
			return
		}
		w.WriteString("{")
		writer <- w
	}()
	f, err := Open(ctx, name, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := <-writer
	if w == nil {
		t.Fatal("the writer could not open the FIFO")
	}
	defer w.Close()
	buf := make([]byte, 16)
	if n, err := f.Read(buf); n != 1 || err != nil {
		t.Fatalf("first read = %d, %v; want the one byte written", n, err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := ended(t, func() error { _, err := f.Read(buf); return err }); !errors.Is(err, context.Canceled) {
		t.Fatalf("stalled read = %v, want context.Canceled", err)
	}
}

// A FIFO read to its end with a writer that finishes: read like a file,
// and cut at the limit like one.
func TestFIFOReadWhole(t *testing.T) {
	for _, tc := range []struct {
		write string
		ok    bool
	}{{"1234", true}, {"12345", false}} {
		name := mkfifo(t)
		go func() {
			if w, err := os.OpenFile(name, os.O_WRONLY, 0); err == nil {
				w.WriteString(tc.write)
				w.Close()
			}
		}()
		got, err := ReadAll(context.Background(), name, 4)
		var tl *TooLargeError
		if tc.ok && (err != nil || string(got) != tc.write) || !tc.ok && !errors.As(err, &tl) {
			t.Errorf("%q through a FIFO, limit 4: %q, %v", tc.write, got, err)
		}
	}
}

func TestNotThereAndFolder(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(context.Background(), filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Open(context.Background(), dir, 10); !errors.Is(err, ErrFolder) || !strings.Contains(err.Error(), dir) {
		t.Errorf("folder: %v, want ErrFolder naming it", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{12: "12 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 256 << 20: "256 MiB", 300e6: "286 MiB", 2e6: "1.91 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

var _ io.ReadCloser = (*File)(nil)

// A Named file reads with the context bound to it, and says what it
// should be when it is not.
func TestNamed(t *testing.T) {
	dir := t.TempDir()
	n := &Named{}
	if err := n.Set(filepath.Join(dir, "none")); err != nil || n.String() != filepath.Join(dir, "none") {
		t.Fatalf("Set: %v, %q", err, n)
	}
	if _, err := n.Read(10, "a map"); err == nil || err.Error() != n.Path+": no such file" {
		t.Errorf("missing: %v", err)
	}
	n.Path = dir
	if _, err := n.Read(10, "a map"); err == nil || err.Error() != dir+": is a folder; want a map" {
		t.Errorf("folder: %v", err)
	}
	n.Path = mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Bind(ctx, "not a Named: left alone")
	Bind(ctx, n)
	if err := ended(t, func() error { _, err := n.Read(10, "a map"); return err }); !errors.Is(err, context.Canceled) {
		t.Errorf("FIFO, bound to a cancelled context: %v", err)
	}
}
