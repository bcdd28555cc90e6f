// Package migration measures live migration (issue 26): the test guest at
// two sizes (128 and 512 MiB), idle and rewriting part of its memory
// without end (virt.dirty), each moved once by the platform (a
// VirtualMachineInstanceMigration, from its creation to Succeeded, and the
// downtime the VMI's migration state reports) and once by raw libvirt in
// the same run: the same domain XML (launcher/domain) started by an
// embedded libvirt (qemu:///embed, what a source launcher runs) and moved
// peer to peer to a private libvirtd (launcher/hypervisor.StartDaemon, what
// a target launcher runs) on the same machine, with the flags the platform
// uses here (launcher/hypervisor.Conn.Migrate), through a unix migration
// URI and no proxy: the migrate call's time and libvirt's downtime
// statistic.
//
// The raw side runs in a child process (this binary again, see IsChild) as
// the launcher pods' user (uid 107, no capabilities), so that its private
// libvirtd is an unprivileged one like a target pod's and keeps its state
// in the temporary directory instead of the host's /etc and /run.
package migration
