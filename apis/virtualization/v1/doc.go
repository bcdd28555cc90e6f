// Package v1 holds the wire types of virtualization.kubevirt.io/v1, their
// defaults and field-label conversions. JSON names and meanings follow
// KubeVirt's kubevirt.io/v1 so a KubeVirt manifest moves over by changing its
// apiVersion. Clients use this package, not the internal one beside it
// (whose doc.go says who may).
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=kubevirt.dev/virt/apis/virtualization
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=dev.kubevirt.virt.apis.virtualization.v1
// +groupName=virtualization.kubevirt.io
package v1
