// Package virtualmachineinstance is virt-handler's VMI controller: it drives
// the launchers of the VMIs handed to its node and reports what they do.
//
// It watches only its node's VMIs (field selector status.nodeName) and the
// launcher pods on its node, keeps a watch on each launcher (node/monitor),
// and syncs a VMI whenever the VMI, its pod or its domain changes:
//
//   - Scheduled, launcher ready, no domain yet: launcher Sync, then one
//     status write to Running (Ready, SoftwareEmulation, interfaces).
//
//   - Domain events: Paused/Running; the end of the domain: Succeeded or
//     Failed with the reason (node/vmistatus). A launcher that went away tells
//     how its guest ended through its final-state file or exit code.
//
//   - Deletion: launcher Shutdown with the VMI's grace period; once the
//     domain is gone, the final phase and the removal of the
//     guest-shutdown finalizer.
//
//   - Stray guests: before its first sync, and whenever a VMI ends or
//     leaves the node, the launchers on the node that no VMI of the node
//     claims (status.activePods of its live VMIs) and that run a domain
//     have it destroyed (stray.go): no guest runs on two nodes.
//
//   - A launcher pod evicted or deleted from outside: the guest its
//     launcher shut down ends the VMI Failed with reason PodTerminated.
//
// Status is written through /status, only when it changed, on a copy of the
// status read, so virt-controller's fields pass through untouched. A
// restarted handler computes the same status for a guest that kept running
// and writes nothing.
package virtualmachineinstance
