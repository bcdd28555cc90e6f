// Package supervisor owns the one domain of a launcher: it defines and
// starts it (preparing the volumes' files and converting the VMI), pauses,
// resumes and reboots it, runs its graceful shutdown (the ACPI power button
// now and again, a destroy when the grace period runs out), follows libvirt's
// lifecycle events, and records how the domain ended, both for later
// questions and in a file that outlives the process. It is the one writer of
// the domain's picture (apiv1.Domain) and streams its changes to watchers.
//
// What others know of the domain comes in through Hooks: the guest agent's
// report (launcher/guestagent) and the taken DHCP leases (launcher/lease)
// are added to each picture, and their changes are announced with Changed.
// The supervisor's lock is taken first: hooks are called with it held and
// must never call back into the supervisor.
//
// Its errors are plain Go errors marked ErrInvalid or ErrPrecondition; the
// gRPC façade (launcher/server) turns them into the contract's codes. It
// talks to libvirt only through launcher/hypervisor and must not import
// libvirt itself.
package supervisor
