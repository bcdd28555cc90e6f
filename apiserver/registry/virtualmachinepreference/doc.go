// Package virtualmachinepreference is the REST storage of
// virtualmachinepreferences: namespaced preferences (device models,
// firmware, machine type, CPU layout) VMs of the same namespace reference
// by spec.preference. It stores and validates them; expanding a VM with one
// is package instancetype's. It works on the internal types and must not
// import any client.
package virtualmachinepreference
