// Package ownership says which component may write which field of a
// VirtualMachineInstance's status, and checks a write against it: the table
// of docs/architecture.md ("Who owns which field") in code. The unit tests of
// every status writer run each of their writes through Foreign, so a writer
// that starts touching another component's field fails its own tests, and a
// new status field has to be given an owner here before anyone may write it.
//
// Fields are named by their JSON names; conditions by their type, as
// conditions[Ready]. It must not import controllers/ or node/.
package ownership
