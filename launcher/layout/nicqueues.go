package layout

// MaxNICQueues caps the queues of a multi-queue NIC: each queue is a tap
// file descriptor in QEMU and a pair of virtqueues with their interrupts
// in the guest, and past a few the guest gains nothing on this platform's
// nodes.
const MaxNICQueues = 8

// NICQueues is the number of queues of each of a guest's NICs: one per
// vCPU, capped at MaxNICQueues, with networkInterfaceMultiqueue; one
// otherwise. virt-handler creates the taps multi-queue when it is more than
// one (the kernel refuses a multi-queue attach to a single-queue tap, and
// the other way round), the launcher gives the domain's NICs that many
// queues: both compute it from the VMI's spec here.
func NICQueues(multiqueue bool, vcpus uint32) uint32 {
	if !multiqueue || vcpus <= 1 {
		return 1
	}
	return min(vcpus, MaxNICQueues)
}
