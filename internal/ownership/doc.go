// Package ownership says which component may write which field of a
// VirtualMachineInstance's and a VirtualMachine's status, which phase values
// each may move a VMI to and on which side of the hand-off (status.nodeName)
// it may write at all, and which parts of a VMI's spec and metadata the
// components may change: the table of docs/ownership.md, in code.
//
// virt-apiserver enforces it (apiserver/admission/fieldownership maps the
// request's service account to its writers and refuses a write that leaves
// their rows), and the unit tests of every status writer run each of their
// writes through the same Check (ownershiptest), so a writer that starts
// touching another component's field fails its own tests before the server
// refuses it, and a new status field has to be given an owner here before
// anyone may write it.
//
// Fields are named by their JSON names below status (or the object, for
// metadata and spec); conditions by their type, as conditions[Ready]. It must
// not import controllers/ or node/.
package ownership
