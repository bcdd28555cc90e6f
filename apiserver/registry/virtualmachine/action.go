package virtualmachine

import (
	"fmt"

	"kubevirt.dev/virt/apis/virtualization"
)

// The rules are KubeVirt's (virt-api's start, stop and restart handlers):
// a run strategy that says whether the VM runs (Always, RerunOnFailure,
// Halted) is changed; one that leaves it to the user (Manual) gets a state
// change request that the VM controller carries out. One difference: a VM
// whose instance is being deleted may be started again at once, where
// KubeVirt answers "already running" until the instance is gone; the
// controller creates the next instance when the old one is gone.

// start: Halted becomes Always; Manual and RerunOnFailure ask the
// controller for a start (replacing an instance that ended); Always starts
// by itself.
func start(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance) (*change, error) {
	if running(vmi) && vmi.DeletionTimestamp == nil {
		return nil, conflict(vm.Name, "VM %s is already running (VMI phase %s)", vm.Name, vmi.Status.Phase)
	}
	done := fmt.Sprintf("VM %s is starting", vm.Name)
	switch s := vm.Spec.EffectiveRunStrategy(); s {
	case virtualization.RunStrategyHalted:
		always := virtualization.RunStrategyAlways
		return &change{runStrategy: &always, done: done}, nil
	case virtualization.RunStrategyManual, virtualization.RunStrategyRerunOnFailure:
		if vmi == nil || vmi.DeletionTimestamp != nil {
			return withRequests(vm, done, startRequest())
		}
		// The instance ended and is kept: it goes first.
		if s == virtualization.RunStrategyRerunOnFailure && vmi.Status.Phase == virtualization.Failed {
			return nil, conflict(vm.Name, "VM %s has runStrategy RerunOnFailure: the controller restarts its failed instance by itself", vm.Name)
		}
		return withRequests(vm, done, stopRequest(vmi), startRequest())
	default:
		return nil, conflict(vm.Name, "VM %s has runStrategy %s: the controller starts its instance by itself; a start has nothing to do", vm.Name, s)
	}
}

// stop: Always and RerunOnFailure become Halted; Manual asks the
// controller to stop the instance. A grace period shorter than the
// instance's replaces it first; it is also how a stop that is already
// underway is sped up.
func stop(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance, gracePeriod *int64) (*change, error) {
	var grace *int64
	if running(vmi) {
		grace = shorter(vmi, gracePeriod)
	}
	done := fmt.Sprintf("VM %s is stopping", vm.Name)
	switch s := vm.Spec.EffectiveRunStrategy(); s {
	case virtualization.RunStrategyAlways, virtualization.RunStrategyRerunOnFailure:
		halted := virtualization.RunStrategyHalted
		return &change{runStrategy: &halted, gracePeriod: grace, done: done}, nil
	default:
		if !running(vmi) {
			return nil, conflict(vm.Name, "VM %s is not running", vm.Name)
		}
		// Halted deletes the instance by itself; a deleted one is stopping.
		if s == virtualization.RunStrategyHalted || vmi.DeletionTimestamp != nil {
			if grace == nil {
				return nil, conflict(vm.Name, "VM %s is already stopping; only a gracePeriod shorter than its instance's (%s) changes that",
					vm.Name, gracePeriodOf(vmi))
			}
			return &change{gracePeriod: grace, done: done}, nil
		}
		c, err := withRequests(vm, done, stopRequest(vmi))
		if err != nil {
			return nil, err
		}
		c.gracePeriod = grace
		return c, nil
	}
}

// restart asks the controller to stop the instance and start a new one,
// whatever the run strategy, unless the VM is Halted or has no instance.
func restart(vm *virtualization.VirtualMachine, vmi *virtualization.VirtualMachineInstance, gracePeriod *int64) (*change, error) {
	if s := vm.Spec.EffectiveRunStrategy(); s == virtualization.RunStrategyHalted {
		return nil, conflict(vm.Name, "VM %s is stopped (runStrategy Halted): start it instead", vm.Name)
	}
	if vmi == nil {
		return nil, conflict(vm.Name, "VM %s is not running: it has no instance to restart", vm.Name)
	}
	c, err := withRequests(vm, fmt.Sprintf("VM %s is restarting", vm.Name), stopRequest(vmi), startRequest())
	if err != nil {
		return nil, err
	}
	if running(vmi) {
		c.gracePeriod = shorter(vmi, gracePeriod)
	}
	return c, nil
}

func startRequest() virtualization.VirtualMachineStateChangeRequest {
	return virtualization.VirtualMachineStateChangeRequest{Action: virtualization.StartRequest}
}

// stopRequest stops vmi and no later instance.
func stopRequest(vmi *virtualization.VirtualMachineInstance) virtualization.VirtualMachineStateChangeRequest {
	uid := vmi.UID
	return virtualization.VirtualMachineStateChangeRequest{Action: virtualization.StopRequest, UID: &uid}
}
