package starter

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Split returns the words of line, a single simple command: "curl -H 'a: b'
// x" is curl, -H, "a: b" and x. A # comment is dropped, and a backslash
// before a newline (or a Windows line end) joins the lines, as a browser's
// "copy as cURL" writes them.
//
// Anything a shell would do besides quoting is an error, so that the words
// are exactly what was written: expansions ($VAR, $(…), `…`, $((…)), ~),
// pipes, redirections, several commands, variable assignments.
func Split(line string) ([]string, error) {
	line = strings.ReplaceAll(line, "\r\n", "\n")
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("not a command a shell can read: %v", err)
	}
	switch {
	case len(f.Stmts) == 0:
		return nil, nil
	case len(f.Stmts) > 1:
		return nil, errors.New("several commands: want one, with no ; & or line break between its words")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, errors.New("want one plain command: no pipes, redirections, assignments or compound commands")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		if bad := expansion(w); bad != "" {
			return nil, fmt.Errorf("%s in %q: a shell would expand it; write the value itself", bad, wordText(w))
		}
		// Fields, not Literal: only Fields removes an unquoted word's
		// backslashes, as a shell does.
		fs, err := expand.Fields(nil, w)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", wordText(w), err)
		}
		if len(fs) != 1 {
			return nil, fmt.Errorf("%q: a shell would make %d words of it; quote it", wordText(w), len(fs))
		}
		words = append(words, fs[0])
	}
	return words, nil
}

// expansion names the first part of w that a shell would expand rather
// than take as written, or is "" when there is none.
func expansion(w *syntax.Word) string {
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
		return "a ~"
	}
	// Checked here, not left to expand: {1..99999999} would make a
	// hundred million words before any check of their number.
	if braced := *w; syntax.SplitBraces(&braced) {
		many := false
		syntax.Walk(&braced, func(n syntax.Node) bool {
			if b, ok := n.(*syntax.BraceExp); ok && (b.Sequence || len(b.Elems) > 1) {
				many = true
			}
			return !many
		})
		if many {
			return "a brace expansion"
		}
	}
	bad := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		if bad != "" {
			return false
		}
		switch n.(type) {
		case *syntax.ParamExp:
			bad = "a $ parameter"
		case *syntax.CmdSubst:
			bad = "a command substitution"
		case *syntax.ArithmExp:
			bad = "an arithmetic expansion"
		case *syntax.ProcSubst:
			bad = "a process substitution"
		case *syntax.ExtGlob:
			bad = "a glob"
		}
		return bad == ""
	})
	return bad
}

// wordText is w as it was written, for an error.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return b.String()
}
