// Package crd builds the CRD twin of the VirtualMachineInstance: the same
// schema as virt-apiserver serves, but as a CustomResourceDefinition in its
// own group (virtbench.kubevirt.io), the way CRD-based platforms define it.
//
// The structural openAPIV3Schema is derived from the project's generated
// OpenAPI (generated/openapi), so the kube-apiserver prunes and type-checks
// exactly the fields our types have. Defaults are deliberately left out of
// the schema: the twin's mutating webhook applies them, as KubeVirt's does.
//
// The package is pure: it builds objects and never talks to a cluster.
package crd
