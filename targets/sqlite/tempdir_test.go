//go:build unix

package sqlite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID is the pid of a process that has ended: a child started and
// waited for. The kernel does not hand a pid out again at once, so it
// stays free for the test's short life.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("start a child to get a dead pid: %v", err)
	}
	return cmd.ProcessState.Pid()
}

// TestTempFolderNamedForProcess checks that a temporary database's folder
// carries this process's pid, as ReapStale needs, and that Close still
// removes it.
func TestTempFolderNamedForProcess(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s, err := Open(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(s.dir)
	m := tempName.FindStringSubmatch(name)
	if filepath.Dir(s.dir) != tmp || m == nil || m[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("temporary folder %s, want %s/%s%d-DIGITS", s.dir, tmp, TempPrefix, os.Getpid())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("after Close %s holds %v, want nothing", tmp, entries)
	}
}

// TestReapStale lays out folders that a killed racelab would leave, and
// look-alikes that must never be touched, and checks that Open removes
// exactly the first.
func TestReapStale(t *testing.T) {
	dead, live, parent := deadPID(t), os.Getpid(), os.Getppid()
	db := []string{"racelab.db", "racelab.db-wal", "racelab.db-shm"}
	tests := []struct {
		name  string
		files []string // files to create inside; a name ending in / is a folder
		link  bool     // a symbolic link to a folder, not a folder
		plain bool     // a regular file, not a folder
		reap  bool
	}{
		{name: fmt.Sprintf("%s%d-123456", TempPrefix, dead), files: db, reap: true},
		{name: fmt.Sprintf("%s%d-7", TempPrefix, dead), reap: true}, // killed before the database was made
		{name: fmt.Sprintf("%s%d-99", TempPrefix, dead), files: []string{"racelab.db-journal"}, reap: true},
		// The owner is alive: this process, or another one.
		{name: fmt.Sprintf("%s%d-123456", TempPrefix, live), files: db},
		{name: fmt.Sprintf("%s%d-123456", TempPrefix, parent), files: db},
		// Not only racelab's files: someone else's, whatever the name.
		{name: fmt.Sprintf("%s%d-1", TempPrefix, dead), files: append(slices.Clone(db), "notes.txt")},
		{name: fmt.Sprintf("%s%d-2", TempPrefix, dead), files: []string{"racelab.db", "sub/"}},
		// Not a folder.
		{name: fmt.Sprintf("%s%d-3", TempPrefix, dead), link: true},
		{name: fmt.Sprintf("%s%d-4", TempPrefix, dead), plain: true},
		// Not racelab's naming: the old one without a pid, a near miss,
		// no random part, a leading zero.
		{name: TempPrefix + "1234567890", files: db},
		{name: fmt.Sprintf("racelab-sqlite2-%d-1", dead), files: db},
		{name: fmt.Sprintf("%s%d", TempPrefix, dead), files: db},
		{name: fmt.Sprintf("%s0%d-1", TempPrefix, dead), files: db},
		{name: fmt.Sprintf("%s%d-1x", TempPrefix, dead), files: db},
	}
	tmp := t.TempDir()
	target := t.TempDir() // what the link points to
	for _, tt := range tests {
		path := filepath.Join(tmp, tt.name)
		switch {
		case tt.link:
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			continue
		case tt.plain:
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range tt.files {
			var err error
			if dir, ok := strings.CutSuffix(f, "/"); ok {
				err = os.Mkdir(filepath.Join(path, dir), 0o700)
			} else {
				err = os.WriteFile(filepath.Join(path, f), []byte("x"), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	// Opening a temporary database reaps the folders in os.TempDir().
	t.Setenv("TMPDIR", tmp)
	s, err := Open(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Base(s.dir)
	for _, tt := range tests {
		_, err := os.Lstat(filepath.Join(tmp, tt.name))
		if gone := os.IsNotExist(err); gone != tt.reap {
			t.Errorf("%s: removed %t, want %t (stat: %v)", tt.name, gone, tt.reap, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the folder a link pointed to: %v", err)
	}
	if got := ReapStale(tmp); len(got) != 0 {
		t.Errorf("a second reap removed %v, want nothing", got)
	}
	if _, err := os.Stat(filepath.Join(tmp, own)); err != nil {
		t.Errorf("the open store's own folder: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tmp, own)); !os.IsNotExist(err) {
		t.Errorf("the store's own folder after Close: %v, want it removed", err)
	}
}

// TestReapStaleZombie checks that a folder whose owner was killed but not
// yet waited for (a zombie, as an orphan stays in a container whose first
// process reaps nothing) is reaped, and that a live owner's is not.
func TestReapStaleZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to tell a zombie by")
	}
	// A child that stays alive until killed stands in for a racelab.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command to stand in for a live racelab: %v", err)
	}
	pid := cmd.Process.Pid
	tmp := t.TempDir()
	dir := filepath.Join(tmp, fmt.Sprintf("%s%d-1", TempPrefix, pid))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := ReapStale(tmp); len(got) != 0 {
		t.Errorf("owner alive: reaped %v, want nothing", got)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not waited for yet: a zombie, once the kill has landed.
	for range 100 {
		if zombie(pid) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := ReapStale(tmp)
	_ = cmd.Wait()
	if len(got) != 1 || got[0] != dir {
		t.Errorf("owner a zombie: reaped %v, want [%s]", got, dir)
	}
}
