package replicaset

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// NewInstance is the VMI rs creates: its template, named "<rs>-<random>"
// by the API server, controlled by rs.
func NewInstance(rs *virtv1.VirtualMachineInstanceReplicaSet) *virtv1.VirtualMachineInstance {
	t := rs.Spec.Template
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       rs.Namespace,
			GenerateName:    rs.Name + "-",
			Labels:          maps.Clone(t.ObjectMeta.Labels),
			Annotations:     maps.Clone(t.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, kind)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
}

// desired is spec.replicas, 1 when unset (as the API defaults it).
func desired(rs *virtv1.VirtualMachineInstanceReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func ready(vmi *virtv1.VirtualMachineInstance) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == virtv1.VirtualMachineInstanceReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deletionOrder sorts instances by how little is lost by deleting them,
// least first: not yet on a node before on one, not Ready before Ready,
// younger before older (the older has proven itself), by name last, so
// that a scale-down removes what serves nobody yet.
func deletionOrder(vmis []*virtv1.VirtualMachineInstance) []*virtv1.VirtualMachineInstance {
	sorted := slices.Clone(vmis)
	rank := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(sorted, func(a, b *virtv1.VirtualMachineInstance) int {
		return cmp.Or(
			cmp.Compare(rank(a.Status.NodeName != ""), rank(b.Status.NodeName != "")),
			cmp.Compare(rank(ready(a)), rank(ready(b))),
			b.CreationTimestamp.Compare(a.CreationTimestamp.Time),
			cmp.Compare(a.Name, b.Name),
		)
	})
	return sorted
}
