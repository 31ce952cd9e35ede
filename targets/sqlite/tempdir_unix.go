//go:build unix

package sqlite

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ownerGone says whether the process with pid has ended. Signal 0 checks
// without sending anything: ESRCH means there is no such process; EPERM
// means there is one, another user's; any other answer is taken as alive,
// except a zombie's. A process killed while its parent does not wait for
// it (an orphan in a container whose first process reaps nothing) stays a
// zombie, which signal 0 still finds: it has ended all the same.
func ownerGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	return err == nil && zombie(pid)
}

// zombie says whether pid is a process that has ended and not yet been
// waited for, by its state in /proc/PID/stat, where /proc has it (Linux).
// The state follows the command name, which is in parentheses and may hold
// any byte, so it is read after the last ')'.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z"))
}

// ownedByMe says whether fi belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
