// Package virtualmachineclusterpreference is the REST storage of
// virtualmachineclusterpreferences: cluster-wide preferences VMs of every
// namespace reference by spec.preference, the default kind of that
// reference. It stores and validates them; expanding a VM with one is
// package instancetype's. It works on the internal types and must not
// import any client.
package virtualmachineclusterpreference
