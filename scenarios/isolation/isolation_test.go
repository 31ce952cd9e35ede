package isolation_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/isolation"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/storetest"
)

// Hermitage's published cells (README.md of github.com/ept/hermitage),
// in its column order, as measured by racelab: P prevented, A anomaly.
// Where racelab's measure differs from the published cell, the comment
// says so; the README names each difference.
var want = map[string]string{
	// G0 G1a G1b G1c OTV PMP P4 G-single G2-item G2
	"postgres read-uncommitted": "PPPPPAAAAA", // not in Hermitage: PostgreSQL runs it as read committed
	"postgres read-committed":   "PPPPPAAAAA",
	"postgres repeatable-read":  "PPPPPPPPAA",
	"postgres serializable":     "PPPPPPPPPP",
	"mariadb read-uncommitted":  "PAAAPAAAAA", // OTV: Hermitage says —; MariaDB 10.11 blocks the second writer
	"mariadb read-committed":    "PPPPPAAAAA",
	"mariadb repeatable-read":   "PPPPPPAPAA", // PMP, G-single: Hermitage's R/O, prevented in these read-only tests
	"mariadb serializable":      "PPPPPPPPPP",
	"sqlite serializable":       "PPPPPPPPPP",
}

func measured(t *testing.T, raw ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, err := isolation.Measure(ctx, raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := isolation.Write(&out, rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var got strings.Builder
		for _, c := range r.Cells {
			got.WriteString(map[isolation.Outcome]string{isolation.Prevented: "P", isolation.Anomaly: "A", isolation.Unknown: "?"}[c.Outcome])
		}
		if w := want[r.Target+" "+r.Level]; got.String() != w {
			t.Errorf("%s %s: %s; want %s\n%s", r.Target, r.Level, got.String(), w, out.String())
		}
	}
}

// reachable is the URL of the server env names (def when unset), once it
// answers: one that does not is skipped, or failed under CI.
func reachable(t *testing.T, env, def string) string {
	u := storetest.URL(env, def)
	storetest.Database(t, env, u)
	return u
}

func TestHermitagePostgres(t *testing.T) {
	measured(t, "postgres="+reachable(t, "RACELAB_POSTGRES_URL", targets.DefaultPostgresURL))
}

func TestHermitageMariaDB(t *testing.T) {
	measured(t, "mariadb="+reachable(t, "RACELAB_MYSQL_URL", ""))
}

func TestHermitageSQLite(t *testing.T) {
	measured(t, "sqlite=sqlite:"+filepath.Join(t.TempDir(), "h.db"))
}

// TestBadTarget: a target that is no database, or a level it lacks, is a
// usage error before anything runs.
func TestBadTarget(t *testing.T) {
	for _, c := range []struct {
		targets []string
		want    string
	}{
		{nil, "no target"},
		{[]string{"web=http://127.0.0.1:1"}, "scheme \"http\""},
		{[]string{"pg=postgres://u@127.0.0.1:1/db?isolation=snapshot"}, "want one of read-uncommitted, read-committed, repeatable-read, serializable"},
	} {
		_, err := isolation.Measure(context.Background(), c.targets, time.Second)
		if err == nil || !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a usage error saying %q", c.targets, err, c.want)
		}
	}
}
