package shards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/racelab/racelab/internal/sign"
	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// Spec is the shard a process is asked to play, as written: which shard
// (ParseShard), the run the shards share, and when to release.
type Spec struct {
	Shard, RunID, StartAt string
	// Wait lets a StartAt more than a day ahead stand.
	Wait bool
	// Period is the time between two trials' releases; Trials says the
	// plan has trials to space (a run's, not a load's).
	Period time.Duration
	Trials bool
}

// Sharding reads the spec into the shard this process plays, at now,
// with the environment env for "auto" (ParseShard).
func (s Spec) Sharding(now time.Time, env func(string) string) (engine.Sharding, error) {
	index, of, err := ParseShard(s.Shard, env)
	if err != nil {
		return engine.Sharding{}, err
	}
	if s.RunID == "" {
		return engine.Sharding{}, usage.Fieldf("RunID", "{Shard} needs {} ID, the same on every shard, so that they hit the same keys (e.g. the CI run number)")
	}
	if err := engine.CheckRunID(s.RunID); err != nil {
		return engine.Sharding{}, err
	}
	sh := engine.Sharding{Index: index, Of: of, RunID: s.RunID, Period: s.Period}
	if s.Period <= 0 && s.Trials {
		return engine.Sharding{}, usage.Fieldf("Period", "{} %s: want a positive duration such as 1s", s.Period)
	}
	if s.StartAt != "" {
		if sh.StartAt, err = ParseStartAt(s.StartAt, now); err != nil {
			return engine.Sharding{}, err
		}
		if err := CheckStartAt(sh.StartAt, now, s.Wait); err != nil {
			return engine.Sharding{}, err
		}
	} else if s.Wait {
		return engine.Sharding{}, usage.Fieldf("Wait", "{} needs {StartAt}: it only lets a shard wait for a release over a day away")
	}
	sh.Host, _ = os.Hostname()
	return sh, nil
}

// Encode is a part as verify reads it: indented JSON, signed under key
// when there is one.
func Encode(part *results.ShardResult, key []byte) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(part); err != nil {
		return nil, fmt.Errorf("encode shard %d: %w", part.Shard, err)
	}
	data, err := sign.IfKey(b.Bytes(), key)
	if err != nil {
		return nil, fmt.Errorf("sign shard %d: %w", part.Shard, err)
	}
	return data, nil
}

// Save writes a part's encoded data to its file in dir, named by its
// index (shard-I-of-N.json), so that a shard whose index came from the
// environment needs no shell to name its file. The file is written
// whole, then renamed: a collector never reads half a part.
func Save(dir string, part *results.ShardResult, data []byte) error {
	name := filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.json", part.Shard, part.Shards))
	tmp := name + ".tmp"
	// The folder itself only: a path whose parent is missing was refused
	// by CheckDir, and a typo must not grow folders from the root.
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// CheckDir refuses a folder Save could not write to before a shard runs,
// not after it has fired: dir must be a folder, or name one to make in a
// folder that exists (shards side by side make it together). Its field
// is ShardDir.
func CheckDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return usage.Fieldf("ShardDir", "{} %s is a file; want a folder for the parts", dir)
		}
		return nil
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return usage.Fieldf("ShardDir", "{} %s: folder %s does not exist; create it, or name a folder inside one that does", dir, parent)
	}
	return nil
}

// ExpandDirs replaces each folder among names by the parts Save wrote
// in it, so that a verifier without a shell (a distroless pod) can be
// given the folder; "-" (standard input) and files stay as they are.
func ExpandDirs(names []string) ([]string, error) {
	var out []string
	for _, name := range names {
		fi, err := os.Stat(name)
		if name == "-" || err != nil || !fi.IsDir() {
			out = append(out, name)
			continue
		}
		parts, err := filepath.Glob(filepath.Join(name, "shard-*.json"))
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return nil, usage.Fieldf("ShardDir", "%s holds no shard-*.json; want the folder the shards wrote with {}", name)
		}
		out = append(out, parts...)
	}
	return out, nil
}
