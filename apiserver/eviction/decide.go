package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Decision is the webhook's answer to one eviction.
type Decision struct {
	// Allowed lets the eviction delete the pod.
	Allowed bool
	// Mark sets the VMI's evacuationNodeName to Node (denied evictions).
	Mark bool
	Node string
	// Message says why an eviction is denied.
	Message string
}

// Decide answers the eviction of pod, a launcher pod of vmi (nil: the pod's
// VMI is gone). Only the pod that runs the guest is protected: a target pod,
// a pod the guest already left, a pod of a VMI not yet handed to a node or
// already ended may go, as may a pod already going.
func Decide(pod *corev1.Pod, vmi *virtv1.VirtualMachineInstance) Decision {
	switch {
	case vmi == nil, pod.DeletionTimestamp != nil, vmi.DeletionTimestamp != nil,
		vmi.Status.NodeName == "", vmi.Status.Phase.IsFinal():
		return Decision{Allowed: true}
	}
	if _, active := vmi.Status.ActivePods[pod.UID]; !active || pod.Spec.NodeName != vmi.Status.NodeName {
		return Decision{Allowed: true}
	}
	if ms := vmi.Status.MigrationState; ms != nil && ms.TargetPod == pod.Name {
		return Decision{Allowed: true}
	}
	node := pod.Spec.NodeName
	mark := Decision{Mark: true, Node: node, Message: fmt.Sprintf("Eviction triggered evacuation of VMI %s/%s", vmi.Namespace, vmi.Name)}
	migratable, why := isMigratable(vmi)
	strategy := virtv1.EvictionStrategyNone
	if vmi.Spec.EvictionStrategy != nil {
		strategy = *vmi.Spec.EvictionStrategy
	}
	switch strategy {
	case virtv1.EvictionStrategyLiveMigrate:
		if !migratable {
			// The drain blocks, visibly: kubectl drain prints this message
			// with each retry.
			return Decision{Message: fmt.Sprintf("VMI %s/%s has evictionStrategy LiveMigrate but cannot be live-migrated: %s", vmi.Namespace, vmi.Name, why)}
		}
		return mark
	case virtv1.EvictionStrategyLiveMigrateIfPossible:
		if !migratable {
			// The guest stops with its pod; a VM starts it again elsewhere.
			return Decision{Allowed: true}
		}
		return mark
	case virtv1.EvictionStrategyExternal:
		// Someone else (cluster-api-provider-kubevirt) watches the mark and
		// moves the workload; nothing here migrates.
		return mark
	default:
		return Decision{Allowed: true}
	}
}

// isMigratable reads the LiveMigratable condition; without one the answer
// is not known yet and counts as no.
func isMigratable(vmi *virtv1.VirtualMachineInstance) (bool, string) {
	c := vmi.Status.Condition(virtv1.VirtualMachineInstanceIsMigratable)
	switch {
	case c == nil:
		return false, "its LiveMigratable condition is not computed yet"
	case c.Status == corev1.ConditionTrue:
		return true, ""
	case c.Message != "":
		return false, c.Message
	default:
		return false, c.Reason
	}
}
