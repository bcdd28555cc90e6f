// Package virtualization holds the internal (hub) types of the
// virtualization.kubevirt.io group: what virt-apiserver's strategies and
// validation work on, converted from and to every served version. Only the
// apiserver and apis/ import it; clients use the versioned package.
//
// +k8s:deepcopy-gen=package
// +groupName=virtualization.kubevirt.io
package virtualization
