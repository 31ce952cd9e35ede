// Package retry starts a request over when a real server refused it because
// of a concurrent change: Redis's WATCH strategy when EXEC fails, and
// PostgreSQL's SERIALIZABLE strategy when a commit is refused. Both stores
// retry the same way (a jittered, growing wait, an optional bound on the
// attempts, a count of the restarts); only what they call a refusal and how
// they word giving up are their own.
package retry
