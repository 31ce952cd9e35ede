// Package pace says when the requests of an open-model load arrive: a
// constant rate, or stages that ramp from one rate to the next, spaced
// evenly or as a seeded Poisson process. It only computes instants, as
// offsets from the start; the load engine waits for them and sends. Being
// pure arithmetic, a schedule is the same for the same seed on every
// machine, and it runs in virtual time as well as on the real clock.
//
// The shape follows k6's ramping-arrival-rate: each stage moves the rate
// linearly, over its duration, from where the previous stage left it to
// its own target; the first starts from the schedule's start rate.
package pace
