//go:build unix

package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownerGone says whether no process with pid exists. Signal 0 checks
// without sending anything: ESRCH means there is none; EPERM means there
// is one, another user's; any other answer is taken as "alive".
func ownerGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// ownedByMe says whether fi belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
