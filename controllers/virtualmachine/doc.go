// Package virtualmachine is the VM controller of virt-controller: it keeps
// the one VirtualMachineInstance of each VirtualMachine (named like the VM,
// controlled by it) created or deleted according to the VM's run strategy
// and the user's state change requests (status.stateChangeRequests, which
// virt-apiserver's start, stop and restart append and this controller drops
// once done), backs off exponentially when instances keep failing soon
// after they start, and summarises the VM in its status (printableStatus,
// created, ready, conditions).
//
// It reads VMIs and writes only VMI creations and deletions; everything that
// happens to an instance after its creation is the VMI controller's and the
// node's.
package virtualmachine
