// Package virtualmachineinstancetype is the REST storage of
// virtualmachineinstancetypes: namespaced sizes (vCPUs, memory, placement)
// VMs of the same namespace reference by spec.instancetype. It stores and
// validates them; expanding a VM with one is package instancetype's. It
// works on the internal types and must not import any client.
package virtualmachineinstancetype
