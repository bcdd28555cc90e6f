// Package vmipod finds the launcher pod of a VirtualMachineInstance and reads
// what both of its readers need from it: the informer index of pods by VMI
// UID, the VMI a pod belongs to, and whether its launcher has exited.
//
// It is shared vocabulary of virt-controller, which creates the pods, and
// virt-handler, which drives the launchers in them; neither component
// imports the other. It must not import controllers/ or node/.
package vmipod
