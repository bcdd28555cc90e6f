package v1

import "strings"

// The kinds a VM's spec.instancetype and spec.preference refer to.
const (
	InstancetypeKind        = "VirtualMachineInstancetype"
	ClusterInstancetypeKind = "VirtualMachineClusterInstancetype"
	PreferenceKind          = "VirtualMachinePreference"
	ClusterPreferenceKind   = "VirtualMachineClusterPreference"
)

// Annotations the VM controller puts on the instances it expands, naming
// what they were expanded with (KubeVirt's kubevirt.io/instancetype-name
// and friends, under this group's prefix).
const (
	InstancetypeAnnotation        = "virtualization.kubevirt.io/instancetype-name"
	ClusterInstancetypeAnnotation = "virtualization.kubevirt.io/cluster-instancetype-name"
	PreferenceAnnotation          = "virtualization.kubevirt.io/preference-name"
	ClusterPreferenceAnnotation   = "virtualization.kubevirt.io/cluster-preference-name"
)

// Labels on the VirtualMachineInstancetypeRevisions holding a VM's copy of an instancetype
// or preference: what was copied, and which generation of it.
const (
	RevisionObjectKindLabel       = "virtualization.kubevirt.io/revision-object-kind"
	RevisionObjectNameLabel       = "virtualization.kubevirt.io/revision-object-name"
	RevisionObjectUIDLabel        = "virtualization.kubevirt.io/revision-object-uid"
	RevisionObjectGenerationLabel = "virtualization.kubevirt.io/revision-object-generation"
)

// NormalizeInstancetypeKind is the kind a VM's spec.instancetype.kind
// names, and false if it names none: the cluster-wide kind when empty, and,
// as in KubeVirt, either kind by its name or its lower-case singular or
// plural resource name.
func NormalizeInstancetypeKind(kind string) (string, bool) {
	switch strings.ToLower(kind) {
	case "", "virtualmachineclusterinstancetype", "virtualmachineclusterinstancetypes":
		return ClusterInstancetypeKind, true
	case "virtualmachineinstancetype", "virtualmachineinstancetypes":
		return InstancetypeKind, true
	}
	return "", false
}

// NormalizePreferenceKind is the kind a VM's spec.preference.kind names,
// like NormalizeInstancetypeKind.
func NormalizePreferenceKind(kind string) (string, bool) {
	switch strings.ToLower(kind) {
	case "", "virtualmachineclusterpreference", "virtualmachineclusterpreferences":
		return ClusterPreferenceKind, true
	case "virtualmachinepreference", "virtualmachinepreferences":
		return PreferenceKind, true
	}
	return "", false
}
