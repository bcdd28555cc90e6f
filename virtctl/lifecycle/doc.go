// Package lifecycle asks virt-apiserver to act on a VM or a VMI: the PUT
// subresources of docs/guest-access.md (start, stop, restart of a VM;
// pause, unpause, soft reboot of a VMI), each a Call built from its
// options and sent with the generated clientset's REST client.
//
// It says nothing to people: turning the API's errors into sentences is
// package apierror's, printing them the command line's.
package lifecycle
