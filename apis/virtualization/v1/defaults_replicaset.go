package v1

import "k8s.io/utils/ptr"

// SetDefaults_VirtualMachineInstanceReplicaSetSpec asks for one instance when
// the user named no number, as KubeVirt does. The template's instance spec
// is defaulted like a VMI's (SetDefaults_VirtualMachineInstanceSpec), so
// every instance created from it is complete before it is posted.
func SetDefaults_VirtualMachineInstanceReplicaSetSpec(spec *VirtualMachineInstanceReplicaSetSpec) {
	if spec.Replicas == nil {
		spec.Replicas = ptr.To(int32(1))
	}
}
