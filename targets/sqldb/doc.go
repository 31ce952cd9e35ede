// Package sqldb is racelab's door to an application's own database:
// PostgreSQL, MySQL/MariaDB or SQLite, named by one URL (sqlite:PATH,
// postgres://…, mysql://…). A race file reads the truth from it after a
// burst (a sql: readback), and a SQL race fires its transactions at it.
//
// Open parses a URL without any I/O. Read runs one query read-only: SQLite
// opened read-only (mode=ro, query_only), PostgreSQL and MySQL inside a
// READ ONLY transaction, so that a readback can never change what it
// judges. Its rows come back as maps of column to value with their types
// kept: whole numbers as int64, NULL as nil, text as string, so that a
// rule compares them as it reads.
//
// Arguments are always bound as parameters, never spliced into the text;
// a query is written with ? placeholders and Rebind rewrites them as
// $1, $2… for PostgreSQL (outside quotes and comments).
//
// A password in a URL never leaves the package: String and every error
// show the URL with it hidden, and an error a driver words with the
// password in it has it replaced.
//
// Classify sorts a database's errors into its own refusals (a
// serialization failure, a deadlock, a lock wait timeout, SQLite's BUSY
// and LOCKED), which a transaction may retry, and anything else.
package sqldb
