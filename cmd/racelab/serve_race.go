package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/targets"
)

// serve --race FILE: the classroom page shows one SQL race file beside
// each database given as --store NAME=URL (read committed beside
// serializable), its button playing one trial on every database at once
// with racelab run's engine and the file's own player. A database serves
// no HTTP contract, so it is a --store only with --race, and --race
// takes databases only. An HTTP race file is refused: its targets are
// services, which serve does not front.

// databaseWant is what a --store of --race may be, for every complaint.
const databaseWant = "want NAME=postgres://…?isolation=read-committed, NAME=mysql://…?isolation=… or NAME=sqlite:PATH"

// checkRaceStore checks the --store value v, whose spec is sp, against
// --race: a database needs --race, and --race needs databases. It
// answers whether v is a database that --race plays on.
func (o *serveOptions) checkRaceStore(v string, sp targets.Spec) (bool, error) {
	database := sp.Store == targets.SQLStore
	switch {
	case database && o.Race == "":
		return false, usageError{fmt.Errorf("--store %s is a database, which serves no HTTP contract; race a SQL race file's transactions on it with --race FILE.race.yaml", v)}
	case !database && o.Race != "":
		return false, usageError{fmt.Errorf("--store %s: --race plays its transactions on databases; %s", v, databaseWant)}
	case database:
		// The page and the engine call a database by its name; its URL
		// is no name (it holds ':' and '/', and reads as a target).
		if name, _ := splitStore(v); name == "" {
			return false, usageError{fmt.Errorf("--store %s: name the database, as in --store db=%s; the page shows it by that name", v, v)}
		}
	}
	return database, nil
}

// loadRace reads --race's file as racelab run reads it, and keeps its
// story for the room. It refuses what is not a SQL race, and --bug, which
// changes a contract no database serves.
func (o *serveOptions) loadRace() error {
	if o.Race == "" {
		return nil
	}
	if o.Bug != "" {
		return usageError{fmt.Errorf("--bug %s changes the HTTP contract, which --race's databases do not serve; leave one out", o.Bug)}
	}
	// A regular file never waits (Load refuses any other first), so
	// there is no command's context to read it under yet.
	f, err := racefile.Load(context.Background(), o.Race)
	if err != nil {
		return err
	}
	if !f.SQLRace() {
		return usageError{fmt.Errorf("--race %s: serve plays SQL race files (a burst of transaction:); race an HTTP race file with racelab run %s -t http://…", o.Race, o.Race)}
	}
	if len(o.Stores) == 0 {
		return usageError{errors.New("--race needs a database to race on: --store NAME=URL, once per database, such as --store rc='postgres://…?isolation=read-committed' --store ser='postgres://…?isolation=serializable'")}
	}
	o.race, err = f.ScenarioWith(f.Environ(), racefile.Options{Targets: o.Stores})
	return err
}
