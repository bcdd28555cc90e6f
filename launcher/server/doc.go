// Package server serves the node <-> launcher contract (launcher/api/v1) for
// the one domain of a launcher: it defines and starts the domain on Sync,
// runs the graceful shutdown (ACPI power button, destroy when the grace
// period runs out), tracks the domain's lifecycle from libvirt's events,
// follows the guest agent (its lifecycle events, and what it reports about
// the guest, asked off every call's path), and records how the domain ended,
// both for GetDomain and in a file that outlives the process.
//
// It talks to libvirt only through launcher/hypervisor.
package server
