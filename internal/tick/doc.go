// Package tick runs a function at a steady period until told to stop:
// what a progress bar's refresh and SQLite's checkpointer both do.
package tick
