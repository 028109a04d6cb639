//go:build race

package testkit

// RaceEnabled: see race.go.
const RaceEnabled = true
