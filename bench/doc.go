// Package bench is `make bench`: it measures the platform against the
// architecture it replaces (CRDs + webhooks) and against the raw hypervisor,
// side by side in one run on one machine, and writes docs/performance.md
// with a chart (docs/performance.png).
//
// Seven parts, each in its own package: apipath (the API path), startup
// (POST to Running and to the guest's serial marker, against libvirt
// directly), writecount (API writes per VMI lifecycle, from the servers'
// own metrics), overhead (the launcher pod's memory, embedded libvirt
// against a private libvirtd), console (keystroke echo through the
// aggregator against QEMU's socket on the node), network (guest
// downloads and small requests through the masquerade binding against a
// plain tap under raw libvirt) and debian (a Debian cloud guest from POST
// to its first SSH login against the same domain defined and started by
// raw libvirt); rawguest is parts 6 and 7's raw libvirt on a plain tap,
// podusr runs parts 4 and 8's host-side processes as the pods' user. A
// run of some parts can be merged into an earlier run's results (--merge).
// The report package renders what they measured; machine describes the
// host.
//
// Runs are bounded by flags; cancellation (SIGINT/SIGTERM) stops the load
// and every part removes what it created before Run returns.
package bench
