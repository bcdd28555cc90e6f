// Package virtualmachineinstancetyperevision is the REST storage of
// virtualmachineinstancetyperevisions: a VM's copy of the instancetype or
// preference it is pinned to, in the platform's own store so that it is
// backed up, restored and served with the VM. The VM controller creates
// them; virt-apiserver validates each once, when it is created, and
// refuses any later change of its data. It works on the internal types
// and must not import any client.
package virtualmachineinstancetyperevision
