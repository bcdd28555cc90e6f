package v1

import "testing"

func TestExitCodeRoundTrip(t *testing.T) {
	for _, r := range []StopReason{StopReason_STOP_REASON_GUEST_SHUTDOWN, StopReason_STOP_REASON_DESTROYED,
		StopReason_STOP_REASON_CRASHED, StopReason_STOP_REASON_FAILED, StopReason_STOP_REASON_MIGRATED} {
		if got := StopReasonOfExitCode(ExitCode(r)); got != r {
			t.Errorf("StopReasonOfExitCode(ExitCode(%v)) = %v", r, got)
		}
	}
	if ExitCode(StopReason_STOP_REASON_GUEST_SHUTDOWN) != 0 {
		t.Errorf("a guest shutdown must exit 0")
	}
}

func TestStopReasonOfDetail(t *testing.T) {
	for detail, want := range map[string]StopReason{
		"shutdown":  StopReason_STOP_REASON_GUEST_SHUTDOWN,
		"destroyed": StopReason_STOP_REASON_DESTROYED,
		"crashed":   StopReason_STOP_REASON_CRASHED,
		"failed":    StopReason_STOP_REASON_CRASHED,
		"migrated":  StopReason_STOP_REASON_MIGRATED,
		"other":     StopReason_STOP_REASON_FAILED,
		"":          StopReason_STOP_REASON_FAILED,
	} {
		if got := StopReasonOfDetail(detail); got != want {
			t.Errorf("StopReasonOfDetail(%q) = %v, want %v", detail, got, want)
		}
	}
}
