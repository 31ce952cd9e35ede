package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrBadURL is wrapped by the error Open returns when Config.URL is not a
// PostgreSQL URL it can use. Open checks the URL before it dials, so a typo
// is told apart from a server that is down.
var ErrBadURL = errors.New("bad postgres url")

// URLError says why a PostgreSQL URL cannot be used. URL has its password
// hidden, so the error can be printed as it is.
type URLError struct {
	URL    string // the URL, password hidden
	Reason string // what is wrong, in a few words
}

func (e *URLError) Error() string        { return fmt.Sprintf("postgres url %q: %s", e.URL, e.Reason) }
func (e *URLError) Is(target error) bool { return target == ErrBadURL }

// ParseURL checks raw and turns it into a pool configuration. It accepts
// what pgx accepts: a URL, postgres://[user[:password]@]host[:port]/db[?…]
// (postgresql:// too), or libpq's keyword=value form ("host=… dbname=…").
// It says in plain words what is wrong otherwise: pgx reads anything
// without a scheme as keyword=value, so "notaurl" would be "invalid
// keyword/value", and its message repeats the whole string.
func ParseURL(raw string) (*pgxpool.Config, error) {
	bad := func(format string, args ...any) error {
		return &URLError{URL: redact(raw), Reason: printable(fmt.Sprintf(format, args...))}
	}
	switch {
	case strings.TrimSpace(raw) == "":
		return nil, bad("empty")
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the URL, which may hold a password
			}
			return nil, bad("%v", err)
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return nil, bad("scheme %q is not postgres or postgresql", u.Scheme)
		}
		// pgx says only "invalid port"; name it. Several hosts
		// (h1:5432,h2:5433) are left to pgx.
		if !strings.Contains(u.Host, ",") {
			if port := u.Port(); port != "" {
				if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
					return nil, bad("port %s is outside 1-65535", port)
				}
			}
		}
	case !strings.Contains(raw, "="):
		return nil, bad("not a URL (nor keyword=value settings)")
	}
	pcfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, bad("%s", pgxReason(err))
	}
	return pcfg, nil
}

// pgxReason is pgx's parse error without the "cannot parse `…`: " that
// repeats the string.
func pgxReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 && strings.HasPrefix(msg, "cannot parse `") {
		return msg[i+len("`: "):]
	}
	return msg
}

// passwordSetting is a password given as a setting: password=… in the
// keyword=value form, or in a URL's query.
var passwordSetting = regexp.MustCompile(`(?i)(password=)('(?:[^'\\]|\\.)*'|[^&\s#]*)`)

// redact hides the password of a URL or keyword=value string, even of one
// that does not parse: whatever lies between "user:" and the last '@', and
// the value of a password setting.
func redact(raw string) string {
	raw = passwordSetting.ReplaceAllString(raw, "${1}xxxxx")
	prefix, rest := "", raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", r
	}
	// The last '@' anywhere, not only before the first '/': a password
	// may hold an unescaped '/' or '?', and hiding too much in a message
	// costs nothing.
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
}

// printable makes a reason safe to print on one line: a library's message
// may repeat a part of the URL, and the URL may hold any byte.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
