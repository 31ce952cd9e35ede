//go:build !unix

package sqlite

import "io/fs"

// ownerGone cannot tell a dead process from a live one portably here, so
// it says none is gone and nothing is reaped.
func ownerGone(int) bool { return false }

// ownedByMe is false for the same reason: reap nothing.
func ownedByMe(fs.FileInfo) bool { return false }
