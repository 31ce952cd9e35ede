// Package server holds what racelab's stores on a real server (redis,
// postgres) share, so that each store keeps only what its driver and its
// strategies make its own:
//
//   - what a store holds (Store) and its Config's defaults filled in and
//     strategy checked (Config.WithDefaults);
//   - the steps of opening a store, each store's names, defaults and
//     driver given as a Kind (Open);
//   - the server's URL checked in plain words before anything is dialled,
//     its password hidden in every message (HidePassword, ParseURL,
//     CheckAddress, Printable, URLErrors);
//   - a failed first contact told in one line that wraps the store's
//     sentinel (Server.Unreachable);
//   - the pool of connections, replaced by a larger one and warmed before a
//     burst, so that no connection is opened inside it (Pool);
//   - the pause between a read-then-write strategy's read and its write
//     (Pause).
//
// It knows nothing of Redis, PostgreSQL or racelab's stories.
package server
