package postgres

import (
	"errors"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/racelab/racelab/targets/internal/server"
)

// ErrBadURL is wrapped by the error Open returns when Config.URL is not a
// PostgreSQL URL it can use. Open checks the URL before it dials, so a typo
// is told apart from a server that is down.
var ErrBadURL = errors.New("bad postgres url")

// URLError says why a URL cannot be used (see server.URLError).
type URLError = server.URLError

// ParseURL checks raw and turns it into a pool configuration. It accepts
// what pgx accepts: a URL, postgres://[user[:password]@]host[:port]/db[?…]
// (postgresql:// too), or libpq's keyword=value form ("host=… dbname=…").
// It says in plain words what is wrong otherwise: pgx reads anything
// without a scheme as keyword=value, so "notaurl" would be "invalid
// keyword/value", and its message repeats the whole string.
func ParseURL(raw string) (*pgxpool.Config, error) {
	bad := server.URLErrors("postgres", raw, redact, ErrBadURL)
	switch {
	case strings.TrimSpace(raw) == "":
		return nil, bad("empty")
	case strings.Contains(raw, "://"):
		u, err := server.ParseURL(raw)
		if err != nil {
			return nil, bad("%v", err)
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return nil, bad("scheme %q is not postgres or postgresql", u.Scheme)
		}
		// pgx says only "invalid port"; name it. Several hosts
		// (h1:5432,h2:5433) are left to pgx.
		if !strings.Contains(u.Host, ",") {
			if err := server.CheckAddress(u); err != nil {
				return nil, bad("%v", err)
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
	return server.HidePassword(passwordSetting.ReplaceAllString(raw, "${1}"+server.Hidden))
}
