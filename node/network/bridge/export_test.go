package bridge

import (
	"errors"
	"testing"
)

// ErrStopped is the error of a Setup that StopAfter stopped.
var ErrStopped = errors.New("stopped by the test")

// StopAfter makes Setup fail with ErrStopped after its first n steps, as
// a virt-handler that dies there, until Resume or the end of the test.
func StopAfter(t testing.TB, n int) {
	done := 0
	testHookAfterStep = func(string) error {
		if done++; done == n {
			return ErrStopped
		}
		return nil
	}
	t.Cleanup(Resume)
}

// RecordSteps collects the names of the steps Setup runs in *steps, until
// Resume or the end of the test.
func RecordSteps(t testing.TB, steps *[]string) {
	testHookAfterStep = func(step string) error {
		*steps = append(*steps, step)
		return nil
	}
	t.Cleanup(Resume)
}

// Resume lets Setup run to its end again.
func Resume() { testHookAfterStep = nil }
