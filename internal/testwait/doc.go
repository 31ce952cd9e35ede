// Package testwait holds the waiting racelab's tests do: subtests that
// spend their time waiting (out a shard's lead, or on a service that
// sleeps inside its race window) run side by side however few slots go
// test's -parallel gives (SideBySide), and a test waits for a condition
// another goroutine brings about (Eventually).
package testwait
