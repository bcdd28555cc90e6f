package v1

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoLibvirt guards the promise to the node daemon: importing the
// contract pulls in neither libvirt (cgo) nor the launcher's implementation.
func TestNoLibvirt(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "kubevirt.dev/virt/launcher/api/v1").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		// (runtime/cgo itself is fine: package net uses it for its resolver.)
		if strings.HasPrefix(dep, "libvirt.org/") || strings.HasPrefix(dep, "kubevirt.dev/virt/launcher/") && dep != "kubevirt.dev/virt/launcher/api/v1" {
			t.Errorf("launcher/api/v1 depends on %s", dep)
		}
	}
}

func TestExitCodeRoundTrip(t *testing.T) {
	for _, r := range []StopReason{StopReason_STOP_REASON_GUEST_SHUTDOWN, StopReason_STOP_REASON_DESTROYED,
		StopReason_STOP_REASON_CRASHED, StopReason_STOP_REASON_FAILED} {
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
		"migrated":  StopReason_STOP_REASON_FAILED,
		"":          StopReason_STOP_REASON_FAILED,
	} {
		if got := StopReasonOfDetail(detail); got != want {
			t.Errorf("StopReasonOfDetail(%q) = %v, want %v", detail, got, want)
		}
	}
}
