package main

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/racelab/racelab/internal/sign"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/results"
)

// signFlags are --sign-key (run, load and their shards sign what they
// write as JSON; verify and report check what they read) and, for the
// readers, --require-signature.
type signFlags struct {
	Key     string
	Require bool
	env     func(string) string // nil: os.Getenv
}

func (f *signFlags) register(fs *pflag.FlagSet, reader bool) {
	what := "sign every JSON document written (-o json, shard parts) with HMAC-SHA-256 under this key"
	if reader {
		what = "check the signature of every document read that has one under this key"
		fs.BoolVar(&f.Require, "require-signature", false, "refuse a document that is not signed under --sign-key (or RACELAB_SIGN_KEY)")
	}
	fs.StringVar(&f.Key, "sign-key", "", what+" (default $RACELAB_SIGN_KEY;\nthe environment keeps it out of the process list)")
}

// signed is render with its JSON signed, when there is a key.
func (f *signFlags) signed(render report.RenderFunc) report.RenderFunc {
	key := sign.Key(f.Key, f.env)
	return func(w io.Writer, format string, width int) error {
		if key == nil || report.Format(format) != report.JSON {
			return render(w, format, width)
		}
		return sign.Render(w, key, func(w io.Writer) error { return render(w, format, width) })
	}
}

// verifier is the checks of every document read: the stories' and, with
// a key, the signatures'.
func (f *signFlags) verifier() (results.Verifier, error) {
	v, key := verifier, sign.Key(f.Key, f.env)
	switch {
	case f.Require && key == nil:
		return v, usageError{errors.New("--require-signature needs the key: give --sign-key or set RACELAB_SIGN_KEY")}
	case key != nil:
		v.Signed = sign.Checker(key, f.Require)
	}
	return v, nil
}
