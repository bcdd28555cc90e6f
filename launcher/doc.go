// Package launcher is the virt-launcher process: the main process of a VMI's
// pod. Options are its flags; Run opens libvirt (by default embedded in the
// process, rooted in the pod's private directory), serves the node <->
// launcher contract (launcher/api/v1) on the pod's socket, marks the pod
// ready, turns SIGTERM into a graceful guest shutdown and exits, once the
// guest has ended, with a status that says how (apiv1.ExitCode).
//
// The subpackages own one concept each: layout (where things are in the pod),
// api/v1 (the contract), domain (VMI -> libvirt XML), disk and nocloud (the
// volumes' files), hypervisor (libvirt), kvm (hardware virtualisation),
// supervisor (the domain's lifecycle and final state), lease (the guests'
// DHCP servers), guestagent (what the guest agent reports), server (the gRPC
// façade over those three), imagecopy (the tool the pod's file-only images
// run to hold their files), kernelboot (links to the kernel-boot files).
//
// Packages under launcher/ must not import controllers/, node/ or
// apiserver/: the launcher knows the other components only through its
// contract.
package launcher
