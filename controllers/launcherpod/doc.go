// Package launcherpod renders the launcher pod of a VirtualMachineInstance:
// the pod that holds a guest's cgroups and namespaces and whose main process,
// virt-launcher, runs the guest under an embedded libvirt.
//
// Rendering is a pure function of the VMI and a Config; creating, watching
// and deleting the pod is the virtualmachineinstance controller's business.
// Where files go inside the pod is the launcher's contract in
// kubevirt.dev/virt/launcher/layout, which this package follows and never
// restates as string literals.
package launcherpod
