package sqldb

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Class sorts what a database answered a statement.
type Class int

const (
	// Failed is any error that is not the database's own refusal: a
	// syntax error, a lost connection, a constraint. It proves nothing
	// about the race.
	Failed Class = iota
	// Refused is the database refusing the transaction to keep its
	// isolation: a serialization failure or deadlock (PostgreSQL 40001,
	// 40P01), a deadlock or lock wait timeout (MySQL 1213, 1205), SQLite
	// BUSY or LOCKED. Retrying the whole transaction is the answer.
	Refused
	// Cancelled is the context ending: the run's timeout or an interrupt.
	Cancelled
)

// Classify sorts err, and names the database's code for it ("40001",
// "1213", "SQLITE_BUSY"), "" when it has none.
func Classify(err error) (Class, string) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Cancelled, ""
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "40001", "40P01":
			return Refused, pg.Code
		}
		return Failed, pg.Code
	}
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		code := strconv.Itoa(int(my.Number))
		switch my.Number {
		case 1213, 1205:
			return Refused, code
		}
		return Failed, code
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case 5:
			return Refused, "SQLITE_BUSY"
		case 6:
			return Refused, "SQLITE_LOCKED"
		}
		return Failed, "SQLITE_" + strconv.Itoa(lite.Code())
	}
	return Failed, ""
}
