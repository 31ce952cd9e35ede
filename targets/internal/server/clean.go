package server

import (
	"strings"
	"time"
)

// CleanScope says which of racelab's keys (Redis) or rows (PostgreSQL) a
// clean removes: every filter given must hold. The zero scope is every
// one, which only a test on its own keys (Within) should ask for.
type CleanScope struct {
	// Within keeps to keys holding it: a run's ("-RUNID-"), or a test's own.
	Within string
	// Prefix keeps to keys starting with it (a story's key, as slug-ab12).
	Prefix string
	// Idle keeps to keys no one has written for longer than it, as far as
	// the store can tell (Redis: from the key's expiry; PostgreSQL: the
	// row's touched column): a run still going wrote its keys since it
	// started.
	Idle time.Duration
}

// Holds says whether the story key key is in the scope's Within and
// Prefix (Idle is the server's to tell).
func (s CleanScope) Holds(key string) bool {
	return strings.Contains(key, s.Within) && strings.HasPrefix(key, s.Prefix)
}

// RunKey is the part every story key of run id holds: keys are
// PREFIX-RUNID-TARGET-TRIAL.
func RunKey(id string) string { return "-" + id + "-" }
