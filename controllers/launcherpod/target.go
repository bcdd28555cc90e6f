package launcherpod

import (
	"fmt"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// MigrationTargetArg makes the launcher wait for an incoming migration
// under a private libvirtd instead of starting the guest.
const MigrationTargetArg = "--migration-target"

// Target says where the target pod of a migration may go.
type Target struct {
	// MigrationUID is the migration's UID: it names the pod and labels it.
	MigrationUID types.UID
	// AvoidNode, when set, keeps the pod off that node (the source's).
	AvoidNode string
}

// TargetName is the name of the target pod of a migration: a function of
// the migration's UID, so a second create of it fails with AlreadyExists.
func TargetName(vmi *virtv1.VirtualMachineInstance, migrationUID types.UID) string {
	h := fnv.New32a()
	h.Write([]byte(migrationUID))
	return fmt.Sprintf("virt-launcher-%s-%s", vmi.Name, utilrand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))[:5])
}

// NewTarget renders the target launcher pod of a migration of vmi: the
// source's pod (same volumes, resources, labels and owner, so the guest finds
// the same world) started in migration-target mode.
func NewTarget(vmi *virtv1.VirtualMachineInstance, cfg Config, t Target) (*corev1.Pod, error) {
	if t.MigrationUID == "" {
		return nil, fmt.Errorf("target pod of VMI %s/%s: no migration UID", vmi.Namespace, vmi.Name)
	}
	pod, err := New(vmi, cfg)
	if err != nil {
		return nil, err
	}
	pod.Name = TargetName(vmi, t.MigrationUID)
	pod.Labels[virtv1.MigrationJobUIDLabel] = string(t.MigrationUID)
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == layout.ComputeContainer {
			c.Args = append(c.Args, MigrationTargetArg)
		}
	}
	if t.AvoidNode != "" {
		pod.Spec.Affinity = avoidNode(pod.Spec.Affinity, t.AvoidNode)
	}
	return pod, nil
}

// avoidNode adds "not on node" to every term of a's required node
// affinity. The terms are ORed, so the requirement goes into each of them;
// with no terms it is the only one.
func avoidNode(a *corev1.Affinity, node string) *corev1.Affinity {
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		req = &corev1.NodeSelector{}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	notThere := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchFields = append(req.NodeSelectorTerms[i].MatchFields, notThere)
	}
	return a
}

// IsTarget reports whether pod is a migration's target pod, and of which
// migration: the label virtv1.MigrationJobUIDLabel, which the source pod
// lacks, tells a second pod of a VMI from a duplicate.
func IsTarget(pod *corev1.Pod) (types.UID, bool) {
	uid, ok := pod.Labels[virtv1.MigrationJobUIDLabel]
	return types.UID(uid), ok
}
