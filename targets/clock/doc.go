// Package clock is racelab's time: the one mechanism its simulated stores
// use to tell and wait out time, real or virtual (Clock, Real, Virtual,
// Chan), and a steady real-time ticker loop (Every, in tick.go) for the
// work that runs on the wall clock's beat whatever the stores run on: a
// progress bar's refresh, SQLite's checkpointer.
//
// A store takes a Clock and does every wait through Clock.Sleep and reads
// every instant through Clock.Now. On Real those are the wall clock and a
// timer. On a *Virtual they are a deterministic discrete-event scheduler:
// goroutines started through the clock ("participants") run one at a time,
// a participant yields when it sleeps or waits on a Chan, and when none can
// run the clock jumps straight to the earliest pending wake-up. A trial that
// would take a 60-second cache TTL or a 30-minute payment session of wall
// time then runs in microseconds, and runs the same way every time: the
// order of events depends only on the program and its seeded choices, never
// on the Go scheduler.
//
// # Running a burst
//
// Run starts n participants at the current instant and returns when all of
// them have returned. The package-level Run does the same on any Clock (on
// Real: n goroutines released together), so a caller need not know which
// clock a store was given:
//
//	v := clock.NewVirtual(start)
//	ns, _ := kv.New(kv.Config{..., Clock: v})
//	err := clock.Run(ctx, v, 10, func(ctx context.Context, i int) {
//		totals[i], errs[i] = app.Hit(ctx, "post")
//	})
//
// Goroutines that a participant starts must be started with Go (or the
// package-level Go), and participants must wait only through the clock:
// Sleep, and Chan's Send and Recv. A participant blocked anywhere else (a
// plain Go channel, a mutex held across a wait, a real time.Sleep) holds
// every other participant up, since only one runs at a time.
//
// # Using a virtual clock from outside
//
// Participants run only during a Run. Between runs, a goroutine that is
// not a participant may still call Sleep, Send or Recv on a virtual clock:
// each such call runs as a Run of one participant, so Sleep from outside is
// how a test moves virtual time on (firing, in order, the wake-ups of
// long-lived participants such as a store's objects), and a store's read
// can be made after a burst without wrapping it in Run. Run(ctx, 0, nil)
// lets parked participants act, without moving time, on what happened
// outside (a closed Chan, a cancelled context). During a run, a goroutine
// that is not a participant must not call Sleep, Send or Recv: the clock
// knows its participants only as "the one whose turn it is".
//
// Contexts end waits on a virtual clock at points the run itself decides
// (before the clock moves on), so a cancel made by a participant is as
// deterministic as the rest.
//
// # Ticking on the wall clock
//
// Every runs a function at a steady period until told to stop, never two
// calls at once: a call that outlasts the period delays the next one
// rather than queueing several. It always runs on the real clock: what it
// paces (a screen's refresh, a database file's checkpoint) happens in
// wall time even when the store's requests run on a virtual clock.
//
// The package knows nothing of racelab; kv and actor use it, and
// racelab's engine runs bursts through it.
package clock
