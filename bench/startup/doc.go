// Package startup measures start latency (issue 9, part 2): for the test
// guest, the time from POST to phase Running and to the guest's serial
// marker (VIRT-GUEST-READY, read from the serial log in the launcher pod's
// private emptyDir on the node), for batches of VMIs started together;
// beside it, the same domains (the launcher's converter output) started
// directly through libvirt (qemu:///embed in a temporary directory) in the
// same run, from the define call to running and to the marker.
package startup
