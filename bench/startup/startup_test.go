package startup

import (
	"testing"
	"time"
)

// Results saved before a milestone was renamed still show it.
func TestStepUnderItsFormerName(t *testing.T) {
	saved := Row{Steps: map[string]time.Duration{"init containers done (image copies)": 2 * time.Second, StepRunning: 3 * time.Second}}
	if got := saved.Step(StepPodInitialized); got != 2*time.Second {
		t.Errorf("Step(%q) of saved results = %v, want 2s", StepPodInitialized, got)
	}
	if got := saved.Step(StepRunning); got != 3*time.Second {
		t.Errorf("Step(%q) = %v, want 3s", StepRunning, got)
	}
	if got := saved.Step(StepLauncherReady); got != 0 {
		t.Errorf("Step of a milestone not measured = %v, want 0", got)
	}
	now := Row{Steps: map[string]time.Duration{StepPodInitialized: time.Second}}
	if got := now.Step(StepPodInitialized); got != time.Second {
		t.Errorf("Step(%q) = %v, want 1s", StepPodInitialized, got)
	}
}
