// Package hypervisor is the launcher's libvirt: it opens the connection
// (by default the embedded QEMU driver, qemu:///embed, so each launcher has a
// private libvirt without a daemon), prepares the embedded driver's root
// directory, runs libvirt's event loop and turns lifecycle callbacks (the
// domain's and the guest agent's) into plain Go values, and performs the few
// domain operations the launcher needs, asking the guest agent included.
//
// It is the only package of the project that imports libvirt (cgo). It must
// not import the API types: callers hand it domain XML and domain names.
package hypervisor
