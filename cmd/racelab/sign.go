package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/racelab/racelab/internal/sign"
	"github.com/racelab/racelab/report"
	"github.com/spf13/pflag"
)

// signFlags are --sign-key (run, load and their shards sign what they
// write as JSON; verify and report check what they read) and, for the
// readers, --require-signature.
type signFlags struct {
	Key     string
	Require bool
	env     func(string) string
}

func (f *signFlags) register(fs *pflag.FlagSet, reader bool) {
	what := "sign every JSON document written (-o json, shard parts) with HMAC-SHA-256 under this key"
	if reader {
		what = "check the signature of every document read that has one under this key"
		fs.BoolVar(&f.Require, "require-signature", false, "refuse a document that is not signed under --sign-key (or RACELAB_SIGN_KEY)")
	}
	fs.StringVar(&f.Key, "sign-key", "", what+" (default $RACELAB_SIGN_KEY;\n"+
		"the environment keeps it out of the process list)")
}

// key is --sign-key, else RACELAB_SIGN_KEY; nil when neither is set.
func (f *signFlags) key() []byte {
	env := f.env
	if env == nil {
		env = os.Getenv
	}
	if k := cmp.Or(f.Key, env("RACELAB_SIGN_KEY")); k != "" {
		return []byte(k)
	}
	return nil
}

// signed is render with its JSON signed, when there is a key; other
// formats are written as they are.
func (f *signFlags) signed(render renderFunc) renderFunc {
	key := f.key()
	if key == nil {
		return render
	}
	return func(w io.Writer, format string, width int) error {
		if report.Format(format) != report.JSON {
			return render(w, format, width)
		}
		var b bytes.Buffer
		if err := render(&b, format, width); err != nil {
			return err
		}
		return sign.All(w, b.Bytes(), key)
	}
}

// verifier is the checks of every document read: the stories' and the
// signatures'.
func (f *signFlags) verifier() (report.Verifier, error) {
	v := verifier
	var err error
	v.Signed, err = f.checker()
	return v, err
}

// checker is the check of each document read (report.Verifier.Signed):
// a signed one must be the key's; an unsigned one is refused only when
// a signature is required. Nil when there is nothing to check.
func (f *signFlags) checker() (func(raw []byte) error, error) {
	key := f.key()
	switch {
	case f.Require && key == nil:
		return nil, usageError{errors.New("--require-signature needs the key: give --sign-key or set RACELAB_SIGN_KEY")}
	case key == nil:
		return nil, nil
	}
	return func(raw []byte) error {
		err := sign.Check(raw, key)
		if errors.Is(err, sign.ErrUnsigned) && !f.Require {
			return nil
		}
		if err != nil {
			return fmt.Errorf("signature: %w", err)
		}
		return nil
	}, nil
}
