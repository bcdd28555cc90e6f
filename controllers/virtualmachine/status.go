package virtualmachine

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Reasons of the VM's conditions.
const (
	reasonVMINotExists = "VMINotExists"
	reasonVMIDeleting  = "VMIDeleting"
	reasonNotReady     = "NotReady"
	reasonVMIExists    = "VMIExists"
)

// restarts reports whether the strategy brings a failed instance back, the
// only case in which back-off applies.
func restarts(s virtv1.VirtualMachineRunStrategy) bool {
	return s == virtv1.RunStrategyAlways || s == virtv1.RunStrategyRerunOnFailure
}

// phaseTime is when vmi last entered phase, if it did.
func phaseTime(vmi *virtv1.VirtualMachineInstance, phase virtv1.VirtualMachineInstancePhase) (time.Time, bool) {
	ts := vmi.Status.PhaseTransitionTimestamps
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Phase == phase {
			return ts[i].PhaseTransitionTimestamp.Time, true
		}
	}
	return time.Time{}, false
}

// notTheGuests are the reasons of failures that say nothing about whether
// the guest can run: its pod was evicted or deleted (a drain), or its node
// was lost. They restart the VM without counting as failed starts, so a
// drain shortly after a start does not delay the next instance.
var notTheGuests = map[string]bool{
	virtv1.ReasonPodTerminated:    true,
	virtv1.ReasonNodeUnresponsive: true,
}

// failedEarly reports whether vmi failed without ever running, or within
// the back-off window of starting to run, for a reason of its own.
func (b Backoff) failedEarly(vmi *virtv1.VirtualMachineInstance, now time.Time) bool {
	if vmi.Status.Phase != virtv1.Failed || notTheGuests[vmi.Status.Reason] {
		return false
	}
	ran, ok := phaseTime(vmi, virtv1.Running)
	if !ok {
		return true
	}
	failed, ok := phaseTime(vmi, virtv1.Failed)
	if !ok {
		failed = now
	}
	return failed.Sub(ran) < b.Window
}

// startFailure is the VM's start-failure record after observing vmi, and
// after how long to look again for a reset (0: no need).
func (b Backoff) startFailure(vm *virtv1.VirtualMachine, vmi *virtv1.VirtualMachineInstance, now time.Time) (*virtv1.VirtualMachineStartFailure, time.Duration) {
	sf := vm.Status.StartFailure.DeepCopy()
	if !restarts(vm.Spec.EffectiveRunStrategy()) {
		// A user who stops or takes over the VM ends the crash loop.
		return nil, 0
	}
	if vmi == nil {
		return sf, 0
	}
	switch vmi.Status.Phase {
	case virtv1.Failed:
		if !b.failedEarly(vmi, now) {
			return nil, 0
		}
		if sf != nil && sf.LastFailedVMIUID == vmi.UID {
			return sf, 0
		}
		n := int32(1)
		if sf != nil {
			n = sf.ConsecutiveFailCount + 1
		}
		retry := metav1.NewTime(now.Add(b.Delay(n)))
		return &virtv1.VirtualMachineStartFailure{ConsecutiveFailCount: n, LastFailedVMIUID: vmi.UID, RetryAfterTimestamp: &retry}, 0
	case virtv1.Succeeded:
		return nil, 0
	case virtv1.Running:
		if sf == nil {
			return nil, 0
		}
		ran, _ := phaseTime(vmi, virtv1.Running)
		if left := b.Window - now.Sub(ran); left > 0 {
			return sf, left
		}
		return nil, 0
	}
	return sf, 0
}

// backingOff reports whether the next instance must wait, and how long.
func backingOff(sf *virtv1.VirtualMachineStartFailure, now time.Time) (bool, time.Duration) {
	if sf == nil || sf.RetryAfterTimestamp == nil {
		return false, 0
	}
	left := sf.RetryAfterTimestamp.Sub(now)
	return left > 0, left
}

// printableStatus summarises the VM for people. stopping says the controller
// has just asked for vmi's deletion.
func printableStatus(vm *virtv1.VirtualMachine, vmi *virtv1.VirtualMachineInstance, stopping bool,
	sf *virtv1.VirtualMachineStartFailure, now time.Time) virtv1.VirtualMachinePrintableStatus {
	crashLoop, _ := backingOff(sf, now)
	crashLoop = crashLoop && restarts(vm.Spec.EffectiveRunStrategy())
	switch {
	case vm.DeletionTimestamp != nil:
		return virtv1.VirtualMachineStatusTerminating
	case vmi == nil:
		if crashLoop {
			return virtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return virtv1.VirtualMachineStatusStopped
	case vmi.DeletionTimestamp != nil || stopping:
		if crashLoop {
			return virtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return virtv1.VirtualMachineStatusStopping
	}
	if ms := vmi.Status.MigrationState; ms != nil && ms.StartTimestamp != nil && ms.EndTimestamp == nil && !vmi.Status.Phase.IsFinal() {
		// KubeVirt's order: a live migration's move shows before a
		// pause, which the copy itself may be (mode Paused).
		return virtv1.VirtualMachineStatusMigrating
	}
	switch vmi.Status.Phase {
	case virtv1.PhaseUnset, virtv1.Pending, virtv1.Scheduling:
		if c := vmi.Status.Condition(virtv1.VirtualMachineInstancePodScheduled); c != nil &&
			c.Status == corev1.ConditionFalse && c.Reason == virtv1.ReasonUnschedulable {
			return virtv1.VirtualMachineStatusUnschedulable
		}
		return virtv1.VirtualMachineStatusStarting
	case virtv1.Scheduled:
		return virtv1.VirtualMachineStatusStarting
	case virtv1.Running:
		if c := vmi.Status.Condition(virtv1.VirtualMachineInstancePaused); c != nil && c.Status == corev1.ConditionTrue {
			return virtv1.VirtualMachineStatusPaused
		}
		return virtv1.VirtualMachineStatusRunning
	case virtv1.Failed:
		if crashLoop {
			return virtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return virtv1.VirtualMachineStatusStopped
	case virtv1.Succeeded:
		return virtv1.VirtualMachineStatusStopped
	}
	return virtv1.VirtualMachineStatusUnknown
}

// readyCondition is the VM's Ready condition: the instance's, or False with
// the reason there is none to be ready.
func readyCondition(vmi *virtv1.VirtualMachineInstance) virtv1.VirtualMachineCondition {
	switch {
	case vmi == nil:
		return virtv1.VirtualMachineCondition{Type: virtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
			Reason: reasonVMINotExists, Message: "the VM has no instance"}
	case vmi.DeletionTimestamp != nil:
		return virtv1.VirtualMachineCondition{Type: virtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
			Reason: reasonVMIDeleting, Message: "the VM's instance is being deleted"}
	}
	if c := vmi.Status.Condition(virtv1.VirtualMachineInstanceReady); c != nil {
		return virtv1.VirtualMachineCondition{Type: virtv1.VirtualMachineReady, Status: c.Status,
			Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime}
	}
	return virtv1.VirtualMachineCondition{Type: virtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
		Reason: reasonNotReady, Message: "the VM's instance is not ready"}
}
