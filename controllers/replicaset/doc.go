// Package replicaset is the VirtualMachineInstanceReplicaSet controller of
// virt-controller: it keeps spec.replicas active instances (neither ended
// nor being deleted) of each replica set, created from its template with
// generateName "<replica set>-" and a controller reference to it. It adopts
// matching instances that have no controller and releases owned ones whose
// labels stop matching, deletes the surplus when scaled down (a deleted VMI
// is shut down through ACPI by its node, within its grace period) and the
// instances that ended, so they are replaced, and writes status.replicas,
// readyReplicas, labelSelector and the ReplicaFailure and ReplicaPaused
// conditions through /status. A paused replica set is counted but not
// acted on.
//
// Like Kubernetes' ReplicaSet controller it acts only when its
// expectations (controllers/expectation) of earlier creations and
// deletions are met, so a lagging cache never makes it create or delete
// twice, and it acts in bursts of at most Burst instances per sync.
//
// It reads VMIs and writes only VMI creations, deletions and owner
// references; everything that happens to an instance after its creation is
// the VMI controller's and the node's.
package replicaset
