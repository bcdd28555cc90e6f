// Package virtualmachineclusterinstancetype is the REST storage of
// virtualmachineclusterinstancetypes: cluster-wide sizes (vCPUs, memory,
// placement) VMs of every namespace reference by spec.instancetype, the
// default kind of that reference. It stores and validates them; expanding
// a VM with one is package instancetype's. It works on the internal types
// and must not import any client.
package virtualmachineclusterinstancetype
