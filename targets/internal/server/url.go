package server

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// URLError says why a server URL cannot be used. URL has its password
// hidden, so the error can be printed as it is. redis.URLError and
// postgres.URLError are this type; Bad is the store's sentinel
// (ErrBadURL), which errors.Is matches.
type URLError struct {
	Kind   string // the server's kind: "redis", "postgres"
	URL    string // the URL, password hidden
	Reason string // what is wrong, in a few words
	Bad    error  // the store's ErrBadURL
}

func (e *URLError) Error() string        { return fmt.Sprintf("%s url %q: %s", e.Kind, e.URL, e.Reason) }
func (e *URLError) Is(target error) bool { return target == e.Bad }

// URLErrors answers how a store's ParseURL words what is wrong with one URL:
// a function that makes a *URLError of kind about raw, shown with its
// password hidden by hide, with the store's sentinel bad, and with a
// reason formatted as fmt.Sprintf does, its secrets hidden (hideIn) and
// made Printable. The reason is hidden too because it often quotes a
// library's message, and such a message may quote any part of the URL.
func URLErrors(kind, raw string, hide func(string) string, bad error) func(format string, args ...any) error {
	shown := hide(raw)
	return func(format string, args ...any) error {
		reason := hideIn(fmt.Sprintf(format, args...), raw, hide)
		return &URLError{Kind: kind, URL: shown, Reason: Printable(reason), Bad: bad}
	}
}

// Hidden is what a URL's password shows as in every output and error: the
// same mark as a race file's secrets (racefile.Hidden), so one word, …,
// means "a secret was here" wherever racelab writes.
const Hidden = "…"

// HidePassword hides the password in the user part of a URL, even of one
// that does not parse: whatever lies between "user:" and the last '@'. A
// password given as a setting (password=…) is the caller's to hide, since
// where such a setting ends depends on the URL's syntax.
func HidePassword(raw string) string {
	if from, to := passwordAt(raw); from < to {
		return raw[:from] + Hidden + raw[to:]
	}
	return raw
}

// hideIn hides in msg, a message about raw, what HidePassword hides in
// raw, and then what hide hides in each word of msg: a library's message
// may quote a piece of the URL, whole or cut ("invalid URL path:
// /0/u:pw@", "invalid port \":password=pw\"").
func hideIn(msg, raw string, hide func(string) string) string {
	if from, to := passwordAt(raw); from < to {
		msg = strings.ReplaceAll(msg, raw[from:to], Hidden)
	}
	words := strings.Split(msg, " ")
	for i, w := range words {
		words[i] = hide(w)
	}
	return strings.Join(words, " ")
}

// passwordAt is where HidePassword's password lies in raw: from the colon
// after the user's name to the last '@'; from == to when there is none.
func passwordAt(raw string) (from, to int) {
	rest := 0
	// Only a real scheme is passed over: in "u:pw@://h" the "://" comes
	// after the user part, which a cut there would leave whole.
	if scheme, _, ok := strings.Cut(raw, "://"); ok && isScheme(scheme) {
		rest = len(scheme) + len("://")
	}
	// The last '@' anywhere, not only before the first '/': a password
	// may hold an unescaped '/' or '?', and hiding too much in a message
	// costs nothing.
	at := strings.LastIndex(raw[rest:], "@")
	if at < 0 {
		return 0, 0
	}
	colon := strings.IndexByte(raw[rest:rest+at], ':')
	if colon < 0 {
		return 0, 0
	}
	return rest + colon + 1, rest + at
}

// isScheme says s is a URL scheme: a letter, then letters, digits, '+',
// '-' or '.' (RFC 3986, section 3.1).
func isScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// ParseURL parses raw as url.Parse does, but its error says only what is
// wrong, without the URL, which may hold a password.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	return u, nil
}

// CheckAddress says what is wrong with u's host and port: a host with a
// colon outside brackets ("redis://:::", an IPv6 address written bare),
// which a driver splits at a guess and dials, or a port outside 1-65535.
// Drivers report either as a server that does not answer, or say only
// "invalid port".
func CheckAddress(u *url.URL) error {
	if h := u.Hostname(); strings.Contains(h, ":") && !strings.HasPrefix(u.Host, "[") {
		return fmt.Errorf("host %q: write an IPv6 address in brackets, such as [::1]:6379", h)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %s is outside 1-65535", port)
		}
	}
	return nil
}

// Printable makes a reason safe to print on one line: a library's message
// may repeat a part of the URL, and the URL may hold any byte.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
