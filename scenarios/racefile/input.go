package racefile

import (
	"bytes"
	"os"
)

// regular refuses a path that is not a regular file (a FIFO, a device, a
// folder) in one line, before it is opened: reading a FIFO no one writes
// to would wait for ever, and a device never ends.
func regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // the read says what is wrong with it
	}
	what := "a " + fi.Mode().Type().String()
	switch {
	case fi.IsDir():
		what = "a folder"
	case fi.Mode()&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case fi.Mode()&os.ModeDevice != 0:
		what = "a device"
	}
	return &Error{File: path, Msg: "not a regular file (" + what + "); want a *.race.yaml file"}
}

// utf8BOM starts a file some editors save as UTF-8.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// text is a race file's content as UTF-8: a byte-order mark dropped, and
// UTF-16 (by its mark, or by the zero bytes of ASCII text in it) refused
// by name, where YAML would only say "control characters".
func text(path string, data []byte) ([]byte, error) {
	if rest, ok := bytes.CutPrefix(data, utf8BOM); ok {
		if len(bytes.TrimSpace(rest)) == 0 {
			return nil, &Error{File: path, Line: 1, Col: 1, Msg: "empty but for a UTF-8 byte-order mark; want a race: name, a burst:, and a rule: (racelab race init writes a starter)"}
		}
		return rest, nil
	}
	enc := ""
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		enc = "UTF-16 little-endian"
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		enc = "UTF-16 big-endian"
	case len(data) >= 2 && data[0] != 0 && data[1] == 0:
		enc = "UTF-16 little-endian (no byte-order mark)"
	case len(data) >= 2 && data[0] == 0 && data[1] != 0:
		enc = "UTF-16 big-endian (no byte-order mark)"
	}
	if enc != "" {
		return nil, &Error{File: path, Line: 1, Col: 1, Msg: "encoded as " + enc + "; save it as UTF-8"}
	}
	return data, nil
}
