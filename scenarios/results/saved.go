package results

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/racelab/racelab/internal/jsondocs"
)

// MaxResultBytes is the most ReadJSON reads of one input: 32 MiB, more
// than the largest sample one target keeps by default (100,000 requests
// in 22 MB), and a bound on what a wrong file (/dev/zero, a log) or a
// pipe that never ends makes racelab read: a file past it is refused by
// its size before it is read, a pipe as it passes it. Larger results
// (--keep-all, several targets of 100,000 requests each) are refused
// rather than read past what report may hold (issue 37: 100 MB).
const MaxResultBytes = 32 << 20

// ErrNotResult is wrapped by every ReadJSON error about input that is not
// a saved racelab result: not JSON, not a result, or another schema.
var ErrNotResult = errors.New("not a racelab result")

// ReadJSON reads saved results: one JSON document, or several one after
// the other, as -o json writes them (report.RenderAll writes a stream for
// results of several scenarios). Every document must carry SchemaVersion:
// a result of another schema may mean other things by the same fields, so
// it is refused rather than guessed at. Fields this version does not know
// are ignored, as the schema promises that adding one keeps its meaning.
//
// It reads at most MaxResultBytes, and every result must pass v.Run: its
// verdicts are recomputed from its own request data, so a forged or
// damaged file is refused rather than rendered as "holds".
func ReadJSON(r io.Reader, v Verifier) ([]*Result, error) {
	saved, err := read(r, v, false)
	return saved.Runs, err
}

// Verifier checks saved documents before anything is read off them.
// Checking a run means judging its trials again by its story's rule, which
// this package does not know: the caller hands the checks in (the
// scenarios package's Check and the shards package's CheckShard).
type Verifier struct {
	// Run checks a run result, its histories checked again within the
	// time limit given.
	Run func(r *Result, historyTimeout time.Duration) error
	// Shard checks a part of a sharded run or load.
	Shard func(s *ShardResult) error
	// Load checks a load result against its story (shards.CheckLoad);
	// nil checks only that its figures agree (LoadResult.Check).
	Load func(l *LoadResult) error
	// Signed, when set, checks each document's bytes before it is
	// decoded: its signature (package sign).
	Signed func(raw []byte) error
	// HistoryTimeout bounds each history's recheck
	// (DefaultHistoryTimeout when zero), and Limit what is read
	// of one input (MaxResultBytes when zero).
	HistoryTimeout time.Duration
	Limit          int64
}

func (v Verifier) load(l *LoadResult) error {
	if err := l.CheckJudged(); err != nil {
		return err
	}
	if v.Load == nil {
		return l.Check()
	}
	return v.Load(l)
}

// Saved is what a stream of saved documents held: run results and load
// results, each kind in the order read.
type Saved struct {
	Runs  []*Result
	Loads []*LoadResult
	// Shards are parts of sharded runs and loads (racelab run|load
	// --shard), which only a merge can judge (shards.VerifyRun).
	Shards []*ShardResult
}

// ReadSaved reads saved results of either kind, as ReadJSON reads runs:
// `racelab run -o json` and `racelab load -o json` documents, in any mix.
// A load result must pass its own Check.
func ReadSaved(r io.Reader, v Verifier) (Saved, error) {
	return read(r, v, true)
}

// Reading saved documents in bounded memory (issue 37): an input is read
// one document at a time (internal/jsondocs), nothing of it is kept past
// the document being checked, and a document is refused before it is
// decoded when the Go values it would become could outgrow
// MaxDocumentWeight.

// MaxDocumentWeight bounds what the documents of one input may cost once
// decoded, as jsondocs.Weigh estimates it: 56 MiB, above the 50 MiB the largest sample racelab
// keeps by default (100,000 requests of one target, 22 MB) weighs. A
// document of a few bytes per object ([{},{},…]) or per map entry would
// otherwise become many times its size in memory.
const MaxDocumentWeight = 56 << 20

// read reads runs, and loads and shard parts when loads is set.
func read(r io.Reader, v Verifier, loads bool) (Saved, error) {
	limit := cmp.Or(v.Limit, MaxResultBytes)
	historyTimeout := cmp.Or(v.HistoryTimeout, DefaultHistoryTimeout)
	// Read a document at a time, so that input that is not JSON at all
	// (/dev/zero, a binary) is refused at its first bytes, not after the
	// limit, and only the document being read is held.
	limited := &io.LimitedReader{R: r, N: limit + 1}
	docs := jsondocs.NewReader(limited)
	var out Saved
	schemas := fmt.Sprintf("%q", SchemaVersion)
	if loads {
		schemas += fmt.Sprintf(", %q or %q", LoadSchemaVersion, ShardSchemaVersion)
	}
	var raw []byte
	var weight int64 // of the documents read so far
	for n := 1; ; n++ {
		var err error
		raw, err = docs.Next(raw)
		if limited.N <= 0 {
			return Saved{}, fmt.Errorf("%w: larger than %d MiB; a saved result is far smaller (trials past the first %d keep no requests)",
				ErrNotResult, limit>>20, DefaultKeepTrials)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Saved{}, err // the reader's own failure: I/O, not the document
		}
		var probe struct {
			Schema *string `json:"schema"`
		}
		// Unmarshal checks the whole document's syntax before it decodes.
		if err := json.Unmarshal(raw, &probe); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return Saved{}, fmt.Errorf("%w: bad JSON%s: %w", ErrNotResult, docs.Line(raw, err), err)
			}
			return Saved{}, fmt.Errorf("%w: document %d has no \"schema\" field", ErrNotResult, n)
		}
		if weight += jsondocs.Weigh(raw); weight > MaxDocumentWeight {
			return Saved{}, fmt.Errorf("%w: documents 1 to %d would take some %d MiB decoded, past the %d MiB racelab holds of one input",
				ErrNotResult, n, weight>>20, MaxDocumentWeight>>20)
		}
		if v.Signed != nil {
			if err := v.Signed(raw); err != nil {
				return Saved{}, fmt.Errorf("%w: document %d: %w", ErrNotResult, n, err)
			}
		}
		if probe.Schema == nil {
			return Saved{}, fmt.Errorf("%w: document %d has no \"schema\" field", ErrNotResult, n)
		}
		switch {
		case *probe.Schema == SchemaVersion:
			err = decodeDoc(raw, &out.Runs, checkedLater)
		case loads && *probe.Schema == LoadSchemaVersion:
			err = decodeDoc(raw, &out.Loads, v.load)
		case loads && *probe.Schema == ShardSchemaVersion:
			err = decodeDoc(raw, &out.Shards, v.Shard)
		default:
			return Saved{}, fmt.Errorf("%w: document %d has schema %q; this racelab reads %s", ErrNotResult, n, *probe.Schema, schemas)
		}
		if errors.Is(err, ErrCannotJudge) {
			return Saved{}, err
		} else if err != nil {
			return Saved{}, fmt.Errorf("%w: document %d: %w", ErrNotResult, n, err)
		}
	}
	if len(out.Runs)+len(out.Loads)+len(out.Shards) == 0 {
		return Saved{}, fmt.Errorf("%w: no JSON in it", ErrNotResult)
	}
	// Checked once every document has been read, so that a file that is
	// not results at all says so first.
	for i, res := range out.Runs {
		if err := v.Run(res, historyTimeout); errors.Is(err, ErrCannotJudge) {
			return Saved{}, err // the result may be sound: it says what to give
		} else if err != nil {
			return Saved{}, fmt.Errorf("%w: document %d: %w", ErrNotResult, i+1, err)
		}
	}
	return out, nil
}

// decodeDoc decodes one document of a saved file, checks it with check
// and adds it to docs: the three kinds a file may hold are read the same
// way.
func decodeDoc[T any](raw json.RawMessage, docs *[]*T, check func(*T) error) error {
	doc := new(T)
	if err := json.Unmarshal(raw, doc); err != nil {
		return err
	}
	if err := check(doc); err != nil {
		return err
	}
	*docs = append(*docs, doc)
	return nil
}

// checkedLater is a run's check as it is read: none, since runs are
// judged again once every document has been read (see read).
func checkedLater(*Result) error { return nil }
