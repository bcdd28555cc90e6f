package virtualmachine

import (
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// nextRequest is the first of the VM's state change requests, nil if
// none. Requests of an action it does not know are dropped: they would
// block the ones behind them forever (the API refuses them anyway).
func nextRequest(status *virtv1.VirtualMachineStatus) *virtv1.VirtualMachineStateChangeRequest {
	for len(status.StateChangeRequests) > 0 {
		req := &status.StateChangeRequests[0]
		if req.Action == virtv1.StartRequest || req.Action == virtv1.StopRequest {
			return req
		}
		popRequest(status)
	}
	return nil
}

// popRequest drops the first request, once it is done.
func popRequest(status *virtv1.VirtualMachineStatus) {
	if len(status.StateChangeRequests) <= 1 {
		status.StateChangeRequests = nil
		return
	}
	status.StateChangeRequests = status.StateChangeRequests[1:]
}

// stops reports whether the stop request req has vmi to delete: the
// instance it names (any, when it names none) that is not being deleted
// yet.
func stops(req *virtv1.VirtualMachineStateChangeRequest, vmi *virtv1.VirtualMachineInstance) bool {
	return vmi != nil && vmi.DeletionTimestamp == nil && (req.UID == nil || *req.UID == vmi.UID)
}
