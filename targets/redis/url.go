package redis

import (
	"errors"
	"regexp"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/racelab/racelab/targets/internal/server"
)

// ErrBadURL is wrapped by the error Open returns when Config.URL is not a
// Redis URL it can use. Open checks the URL before it dials, so a typo is
// told apart from a server that is down.
var ErrBadURL = errors.New("bad redis url")

// URLError says why a URL cannot be used (see server.URLError).
type URLError = server.URLError

// ParseURL checks raw and turns it into go-redis options. It accepts
// redis://[user:password@]host[:port][/db], rediss:// (TLS) and
// unix:///path/to/socket, as go-redis does, and says in plain words what
// is wrong otherwise: go-redis's own errors repeat the whole URL, password
// included, or leave out the part at fault, and it would dial a port out
// of range and report the failure as an unreachable server.
func ParseURL(raw string) (*goredis.Options, error) {
	bad := server.URLErrors("redis", raw, redact, ErrBadURL)
	if strings.TrimSpace(raw) == "" {
		return nil, bad("empty")
	}
	if !strings.Contains(raw, "://") {
		return nil, bad("not a URL")
	}
	u, err := server.ParseURL(raw)
	if err != nil {
		return nil, bad("%v", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		if err := server.CheckAddress(u); err != nil {
			return nil, bad("%v", err)
		}
	case "unix":
		if u.Path == "" {
			return nil, bad("no socket path")
		}
	default:
		return nil, bad("scheme %q is not redis, rediss or unix", u.Scheme)
	}
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		// The URL parsed above, so this error is go-redis's own: a bad
		// database number, path or option, which it may quote whole.
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "redis: "))
	}
	return opts, nil
}

// passwordOption is a password given as a query option
// (unix:///run/redis.sock?password=…).
var passwordOption = regexp.MustCompile(`(?i)(password=)[^&#]*`)

// redact hides the password of a URL, even of one that does not parse:
// whatever lies between "user:" and the last '@', and the value of a
// password option.
func redact(raw string) string {
	return server.HidePassword(passwordOption.ReplaceAllString(raw, "${1}"+server.Hidden))
}
