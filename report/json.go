package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/racelab/racelab/scenarios/results"
)

// renderJSON writes the whole Result, indented, with a trailing newline. A
// result built without a schema (by hand, in a test) is given the current
// one, so that every saved file says what it is; r itself is not changed.
func renderJSON(w io.Writer, r *results.Result) error {
	doc := *r
	if doc.Schema == "" {
		doc.Schema = results.SchemaVersion
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // error texts keep their < > & readable
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
