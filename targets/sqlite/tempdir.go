package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// TempPrefix starts the name of every temporary folder Open makes:
// racelab-sqlite-PID-RANDOM, where PID is the process that owns it.
const TempPrefix = "racelab-sqlite-"

// tempName matches the folders Open makes and nothing else: the prefix, the
// owner's pid and os.MkdirTemp's random digits.
var tempName = regexp.MustCompile(`^` + regexp.QuoteMeta(TempPrefix) + `([1-9][0-9]{0,9})-[0-9]+$`)

// dbFiles are the only files a folder of Open's may hold: the database and
// what SQLite keeps beside it in WAL mode (and in rollback mode, should a
// pragma fail). A folder with anything else is not left alone by racelab,
// whatever its name, and is never reaped.
var dbFiles = map[string]bool{
	dbName:              true,
	dbName + "-wal":     true,
	dbName + "-shm":     true,
	dbName + "-journal": true,
}

// dbName is the database file in a temporary folder.
const dbName = "racelab.db"

// makeTempDir makes a fresh temporary folder named for this process, so
// that a later run can tell a folder whose owner has died (killed by a
// second Ctrl-C or SIGKILL, with no chance to run Close) from one still in
// use.
func makeTempDir() (string, error) {
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", TempPrefix, os.Getpid()))
}

// ReapStale removes the temporary folders in dir that an earlier racelab
// left behind when it was killed: those named as Open names them whose
// owning process is no longer alive. It is conservative, since it deletes
// what it did not make: a folder is removed only if its name matches
// exactly, it is a real folder (not a link) owned by this user, its owner's
// pid is not this process and no process with that pid exists (or only
// its zombie, where /proc tells), and it holds nothing but the database's
// own files. Anything it cannot be sure of is left in place. It answers the folders it removed; errors are not
// reported, as reaping is a courtesy that must never stop a store from
// opening.
func ReapStale(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var reaped []string
	for _, e := range entries {
		m := tempName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() { // IsDir is false for a symbolic link
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || !ownerGone(pid) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !reapable(path) {
			continue
		}
		if os.RemoveAll(path) == nil {
			reaped = append(reaped, path)
		}
	}
	return reaped
}

// reapable says whether path is a folder of this user's holding only the
// database's own files.
func reapable(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return false
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !dbFiles[e.Name()] {
			return false
		}
	}
	return true
}
