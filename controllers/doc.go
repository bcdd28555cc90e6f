// Package controllers is virt-controller, the platform's cluster-wide
// controllers; its packages below create launcher pods, hand VMIs to their
// nodes, watch the nodes' health, keep VirtualMachines' instances and
// VirtualMachineInstanceReplicaSets' replicas.
//
// Packages under controllers/ must not import node/ or apiserver/: they talk
// to virt-handler only through the VMI's status, and share vocabulary with it
// through internal/. Of the launcher they import only launcher/layout, the
// launcher pod's contract.
package controllers
