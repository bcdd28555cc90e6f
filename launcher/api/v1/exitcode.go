package v1

// Exit statuses of the virt-launcher process. The kubelet records them as the
// launcher container's exit code, so they tell how a guest ended even when no
// node daemon was connected at that moment.
const (
	// ExitGuestShutdown: the guest powered itself off (on its own or after
	// an ACPI power button), or the launcher was stopped before it ever
	// started a guest.
	ExitGuestShutdown = 0
	// ExitFailure: the launcher itself failed (bad flags, libvirt unusable,
	// socket not served) or the domain could not be started.
	ExitFailure = 1
	// ExitCrashed: QEMU or the guest crashed.
	ExitCrashed = 3
	// ExitDestroyed: the domain was destroyed, by Kill or because it did not
	// power off within the grace period of a shutdown.
	ExitDestroyed = 4
	// ExitMigrated: the guest moved to another launcher by a completed
	// live migration; this launcher's part is done.
	ExitMigrated = 5
)

// ExitCode is the exit status of a launcher whose domain ended for reason.
func ExitCode(reason StopReason) int {
	switch reason {
	case StopReason_STOP_REASON_GUEST_SHUTDOWN:
		return ExitGuestShutdown
	case StopReason_STOP_REASON_DESTROYED:
		return ExitDestroyed
	case StopReason_STOP_REASON_CRASHED:
		return ExitCrashed
	case StopReason_STOP_REASON_MIGRATED:
		return ExitMigrated
	default:
		return ExitFailure
	}
}

// StopReasonOfDetail is how a domain ended, from the detail of libvirt's
// STOPPED lifecycle event ("shutdown", "destroyed", "crashed", "failed", ...).
// The detail is a plain string so that this package need not import libvirt.
func StopReasonOfDetail(detail string) StopReason {
	switch detail {
	case "shutdown":
		return StopReason_STOP_REASON_GUEST_SHUTDOWN
	case "destroyed":
		return StopReason_STOP_REASON_DESTROYED
	case "crashed", "failed":
		// "failed" after a successful start means QEMU died under the guest.
		return StopReason_STOP_REASON_CRASHED
	case "migrated":
		return StopReason_STOP_REASON_MIGRATED
	}
	return StopReason_STOP_REASON_FAILED
}

// StopReasonOfExitCode is the inverse of ExitCode, for a node daemon that
// finds only the container's exit code.
func StopReasonOfExitCode(code int) StopReason {
	switch code {
	case ExitGuestShutdown:
		return StopReason_STOP_REASON_GUEST_SHUTDOWN
	case ExitDestroyed:
		return StopReason_STOP_REASON_DESTROYED
	case ExitCrashed:
		return StopReason_STOP_REASON_CRASHED
	case ExitMigrated:
		return StopReason_STOP_REASON_MIGRATED
	default:
		return StopReason_STOP_REASON_FAILED
	}
}
