// Package instancetype expands a VirtualMachine with the instancetype and
// the preference it references, as KubeVirt does: the instancetype's vCPUs,
// memory and placement win, and a template that sets them itself conflicts
// (field errors at the template's paths, which the API answers as 422); the
// preference fills only what the template leaves empty. It also resolves a
// VM's references (to the live object, or to the
// VirtualMachineInstancetypeRevision the VM captured) through getters its
// callers provide, builds and reads those revisions, and validates what a
// revision holds when virt-apiserver creates one.
//
// virt-apiserver uses it to validate VMs and to answer
// virtualmachines/NAME/expand-spec; the VM controller to create instances
// and capture revisions; virt-apiserver's revision registry to validate
// them. It works on v1 types and must not import the
// apiserver, controllers/ or any client.
package instancetype
