// Package guests judges what a fault on the node did to its guests, from
// the QEMU processes each guest had when the fault struck and those it has
// after: a guest is lost when a QEMU process it had is gone, doubled when
// it has not exactly one.
//
// Only a guest that had a QEMU process at the fault can be lost: a fault
// struck before any guest had one cannot lose a guest, so the suite also
// reports how many had one, and requires some did (else its "lost" could
// not be anything but 0).
//
// It knows nothing of the cluster: the suite reads the processes (/proc)
// and hands them in by guest name.
package guests
