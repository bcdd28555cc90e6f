// Package virtualization holds the internal (hub) types of the
// virtualization.kubevirt.io group: what virt-apiserver's strategies and
// validation work on, converted from and to every served version. Only
// apis/, the apiserver, internal/instancetype (it validates a revision's
// copy as the server would), bench/webhook (the CRD twin's admission, which
// runs the same validation) and tests import it; clients use the versioned
// package.
//
// +k8s:deepcopy-gen=package
// +groupName=virtualization.kubevirt.io
package virtualization
