// Package sidebyside runs subtests that spend their time waiting (out a
// shard's lead, or on a service that sleeps inside its race window) all
// at once, however few slots go test's -parallel gives.
package sidebyside
