// Package fieldownership is virt-apiserver's admission plugin that holds
// the platform's own components to internal/ownership: a write of a VMI's or
// VM's status (and of their spec and metadata) by virt-handler's or
// virt-controller's service account must stay inside the rows of the
// writers that identity stands for, or it is refused with 403 naming the
// fields. The unit-test guard (internal/ownership/ownershiptest) runs the
// same Check, so the writers' tests and the server agree.
//
// An identity is a writer by its service account's name, in any namespace
// (as in apiserver/admission/noderestriction, an overlay that moves the
// platform stays covered): virt-handler is the Handler of the node its bound
// token names; virt-controller stands for all of virt-controller's
// controllers, which share its service account, so its write must fit one
// of their rows (not a mix of them). Every other identity is not a
// component: RBAC decides what it may write (the platform's user roles grant
// no status writes; cluster admins may repair a stuck object, and the audit
// log records it). The server's own writes (the VM actions) happen inside
// it and reach no admission.
package fieldownership
