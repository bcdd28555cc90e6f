// Package instancetype expands a VirtualMachine with the instancetype and
// the preference it references, as KubeVirt does: the instancetype's vCPUs,
// memory and placement win, and a template that sets them itself conflicts
// (field errors at the template's paths, which the API answers as 422); the
// preference fills only what the template leaves empty. It also resolves a
// VM's references (to the live object, or to the ControllerRevision the VM
// captured) through getters its callers provide, and builds and reads those
// revisions.
//
// virt-apiserver uses it to validate VMs and to answer
// virtualmachines/NAME/expand-spec; the VM controller to create instances
// and capture revisions. It works on v1 types and must not import the
// apiserver, controllers/ or any client.
package instancetype
