package targets

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/racelab/racelab/targets/internal/server"
	"github.com/racelab/racelab/targets/sqldb"
)

// A database as a target: a SQL race fires its transactions at it, at
// the level its URL names (postgres://…?isolation=read-committed,
// mysql://…, sqlite:PATH). It is a URL like an HTTP target's, so that its
// password never reaches a report.

// SQLStore is the Spec.Store and the catalog entry of a database URL.
const SQLStore = "sql"

// databaseSchemes are the URL schemes of the databases a SQL race plays on.
var databaseSchemes = []string{"postgres", "postgresql", "mysql", "mariadb"}

// database says whether s names a database: a postgres:// or mysql://
// URL, or sqlite: followed by a file's path (one with a slash or a dot,
// so that sqlite:naive stays the store's strategy).
func database(s string) bool {
	if rest, ok := strings.CutPrefix(s, "sqlite:"); ok {
		path, _, _ := strings.Cut(rest, "?")
		return strings.ContainsAny(path, "/.")
	}
	scheme, _, ok := strings.Cut(s, "://")
	for _, d := range databaseSchemes {
		if ok && strings.EqualFold(scheme, d) {
			return true
		}
	}
	return false
}

// parseDatabase checks a database URL as sqldb reads it, its isolation
// level included: a level the database lacks is refused here, before
// anything runs, naming the ones it has.
func parseDatabase(s string) (Spec, error) {
	// A saved result names its database with the password hidden
	// (Name); judging it again parses that name, so the mark parses as
	// a password, as an HTTP target's does.
	s = strings.Replace(s, ":"+server.Hidden+"@", ":"+url.PathEscape(server.Hidden)+"@", 1)
	db, err := sqldb.Open(s)
	if err == nil {
		_, err = db.Isolation()
	}
	if err != nil {
		// sqldb names the URL again after "bad database URL"; the
		// target's name says it once.
		shown := sqldb.Redact(s)
		return Spec{}, badSpec("target %q: %s", shown, strings.TrimPrefix(err.Error(), fmt.Sprintf("%s %q: ", sqldb.ErrBadURL, shown)))
	}
	var u *url.URL
	if path, ok := strings.CutPrefix(s, "sqlite:"); ok {
		path, query, _ := strings.Cut(path, "?")
		u = &url.URL{Scheme: "sqlite", Opaque: path, RawQuery: query}
	} else if u, err = url.Parse(s); err != nil {
		return Spec{}, badSpec("target %q: %v", sqldb.Redact(s), err)
	}
	return Spec{Raw: s, Store: SQLStore, URL: u}, nil
}

// databaseGuarantee is what a database target guarantees a SQL race's
// transactions: the level its URL names, or the database's default,
// said as such ("postgres transactions at read-committed, its default").
// parseDatabase has checked the URL and its level.
func databaseGuarantee(spec Spec) string {
	db, err := sqldb.Open(spec.Raw)
	if err != nil {
		return "the race file's transactions, at the level its URL names (isolation=)"
	}
	level, _ := db.Isolation()
	words := fmt.Sprintf("%s transactions at %s", db.Kind(), level)
	if db.Param("isolation") == "" {
		words += ", its default"
	}
	return words
}

// openDatabase opens a database target; it connects to nothing until
// the first transaction (a *sqldb.DB opens its pool on first use), and
// Target.Close closes its connections.
func openDatabase(_ context.Context, spec Spec, _ Options) (any, error) {
	db, err := sqldb.Open(spec.Raw)
	if err != nil {
		return nil, badSpec("target %s: %v", spec.Name(), err)
	}
	return db, nil
}

// ByURL says whether a catalog entry is named by its targets' URLs
// (http://…, postgres://…) rather than by its own name, which no one
// types.
func ByURL(entry string) bool {
	return entry == "http" || entry == "https" || entry == SQLStore
}
