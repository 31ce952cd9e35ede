package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

// raceFiles is where report and verify look for the race file a saved
// result of file ran with: --race-file, else beside file as the result
// records it, else the path the run was given.
func (o *verifyOptions) raceFiles(file string) scenarios.RaceFiles {
	r := scenarios.RaceFiles{Override: o.RaceFile}
	switch fi, err := os.Stat(file); {
	case file == "-":
	case err == nil && fi.IsDir(): // verify's folder of parts
		r.Dir = file
	default:
		r.Dir = filepath.Dir(file)
	}
	return r
}

// judgedFrom is v with every race file looked for as r says.
func judgedFrom(v results.Verifier, r scenarios.RaceFiles) results.Verifier {
	v.Run = r.Check
	v.Shard = func(s *results.ShardResult) error { return shards.CheckShard(s, r.Find) }
	v.Load = func(l *results.LoadResult) error { return shards.CheckLoad(l, r.Find) }
	return v
}

// raceRel is render with each result's race file recorded relative to
// the file the output goes to (results.RaceFile.Rel): a result that
// moves with its race file is judged again from anywhere. An output to
// standard output records none.
func raceRel(rs []*results.Result, render output.RenderFunc) output.RenderFunc {
	return func(w io.Writer, format string, width int) error {
		var dir string
		if f, ok := w.(*output.File); ok {
			dir, _ = filepath.Abs(filepath.Dir(f.Path))
		}
		for _, r := range rs {
			r.Settings = withRel(r.Settings, dir)
		}
		return render(w, format, width)
	}
}

// withRel is set with its race file's path recorded relative to the
// folder dir, an absolute path ("" records none); set itself is left as
// it is, since every output records its own.
func withRel(set *results.Settings, dir string) *results.Settings {
	if set == nil || set.Race == nil {
		return set
	}
	out, race := *set, *set.Race
	race.Rel = ""
	if abs, err := filepath.Abs(race.Path); err == nil && dir != "" {
		race.Rel, _ = filepath.Rel(dir, abs)
	}
	out.Race = &race
	return &out
}
