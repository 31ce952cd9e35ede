package sqldb

import (
	"strconv"
	"strings"
)

// Rebind writes query's ? placeholders as the database takes them:
// $1, $2… for PostgreSQL, as they are for MySQL and SQLite. A ? inside a
// quoted string or identifier, a dollar-quoted string, or a comment is
// text and stays; so does PostgreSQL's ?| and ?& operators' ?, which no
// query reaches as a placeholder when it is written ?? (a literal ?).
func (db *DB) Rebind(query string) string {
	if db.kind != PostgreSQL {
		return query
	}
	return Dollars(query)
}

// Dollars rewrites ? as $1, $2… outside quotes and comments; ?? is one
// literal ?.
func Dollars(query string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end - 1
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end - 1
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i - 2
			} else {
				end += 2
			}
			b.WriteString(query[i : i+2+end])
			i += 2 + end - 1
		case c == '$':
			// A dollar-quoted string, $$…$$ or $tag$…$tag$.
			if tag, ok := dollarTag(query[i:]); ok {
				end := strings.Index(query[i+len(tag):], tag)
				if end < 0 {
					end = len(query) - i - len(tag)
				} else {
					end += len(tag)
				}
				b.WriteString(query[i : i+len(tag)+end])
				i += len(tag) + end - 1
				continue
			}
			b.WriteByte(c)
		case c == '?' && strings.HasPrefix(query[i:], "??"):
			b.WriteByte('?')
			i++
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closing is the index just past the quote q that closes a quoted part
// starting at from; a doubled quote is one quote inside it.
func closing(s string, from int, q byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}

// dollarTag is the $tag$ that opens a dollar-quoted string at the start
// of s.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			return s[:i+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 1 && c >= '0' && c <= '9':
		default:
			return "", false
		}
	}
	return "", false
}

// Count is how many placeholders query holds, as Dollars counts them.
func Count(query string) int {
	return strings.Count(Dollars(query), "$") - strings.Count(query, "$")
}
