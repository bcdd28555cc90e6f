// Package virtualmachineinstance is the VMI controller of virt-controller: it
// creates the one launcher pod of each VirtualMachineInstance, moves the VMI
// through Pending, Scheduling and Scheduled, and hands it to the node by
// setting status.nodeName once the launcher in the pod is ready. From then on
// the VMI's phase, Ready condition and interfaces are the node daemon's; this
// controller only cleans up: it deletes the pod once the guest is down, and
// removes the launcher-pod finalizer once no pod is left.
//
// Before the pod it checks the claims of persistentVolumeClaim volumes: a
// claim that does not exist fails the VMI (PVCNotFound); one that exists but
// is not bound lets the pod be created (a WaitForFirstConsumer claim binds
// only once its pod is scheduled) while status.volumeStatus says why the
// guest waits (PVCNotBound). volumeStatus also records each claim's mode,
// size and file system overhead, from which the pod gets a Block claim as a
// device and the launcher sizes a Filesystem claim's disk image.
//
// It owns the launcher pods (rendered by controllers/launcherpod), the VMI's
// status.volumeStatus and the VirtualMachineInstanceLauncherPodFinalizer. It
// must not import node/ or launcher/ beyond launcher/layout: the node and the
// launcher talk to it only through the VMI's status.
package virtualmachineinstance
