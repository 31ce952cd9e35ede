package readfile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Named is a file a user names, read later with a context bound to it: a
// command-line flag's value (it is a pflag.Value), whose command binds
// its own context before it runs, so that Ctrl-C stops the read.
type Named struct {
	Path string
	ctx  context.Context
}

func (n *Named) String() string     { return n.Path }
func (n *Named) Set(s string) error { n.Path = s; return nil }
func (n *Named) Type() string       { return "string" }

// Bind sets the context Read reads with; unbound, it is
// context.Background.
func (n *Named) Bind(ctx context.Context) { n.ctx = ctx }

// Bind binds ctx to v if it is a *Named, and does nothing otherwise: a
// command passes every flag's value.
func Bind(ctx context.Context, v any) {
	if n, ok := v.(*Named); ok {
		n.Bind(ctx)
	}
}

// Read reads the file, at most limit bytes, as ReadAll does. Its errors
// name the file and what was wrong with it, and a file too large or a
// folder says what the file should be (want: "a mapping, a few lines of
// JSON").
func (n *Named) Read(limit int64, want string) ([]byte, error) {
	b, err := ReadAll(cmp.Or(n.ctx, context.Background()), n.Path, limit)
	var tl *TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file", n.Path)
	case errors.As(err, &tl), errors.Is(err, ErrFolder):
		return nil, fmt.Errorf("%w; want %s", err, want)
	}
	return b, err
}
