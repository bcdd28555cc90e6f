package launcherpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// The memory overhead estimate of a launcher pod, on top of the guest's
// memory. Measured on the project's machines (QEMU 7.2 under TCG, one vCPU):
// QEMU's own allocations besides guest RAM are about 62 MiB and its TCG
// translation-block cache about 46 MiB; virt-launcher with its embedded
// libvirt is budgeted at the rest of the fixed part.
var (
	// launcherOverhead covers virt-launcher, the embedded libvirt and QEMU's
	// own allocations (device models, firmware, I/O buffers).
	launcherOverhead = resource.MustParse("160Mi")
	// tcgOverhead is QEMU's translation-block cache under TCG.
	tcgOverhead = resource.MustParse("64Mi")
	// vcpuOverhead is per vCPU: thread stacks and per-CPU TCG state.
	vcpuOverhead = resource.MustParse("8Mi")
)

// pageTableDivisor: the guest's page tables and QEMU's memory maps grow with
// guest memory; 1/128 of it is a generous bound (4 KiB pages cost 1/512).
const pageTableDivisor = 128

// defaultCPUPerVCPU is the CPU request per vCPU when the VMI asks for none.
// TCG guests are mostly idle in tests; a full core each would not fit the
// project's 2-core machines.
var defaultCPUPerVCPU = resource.MustParse("100m")

// GuestMemory is the memory the guest sees: memory.guest, or the memory
// request (defaulting copies one into the other).
func GuestMemory(vmi *virtv1.VirtualMachineInstance) (resource.Quantity, error) {
	d := vmi.Spec.Domain
	if d.Memory != nil && d.Memory.Guest != nil {
		return d.Memory.Guest.DeepCopy(), nil
	}
	if m, ok := d.Resources.Requests[corev1.ResourceMemory]; ok {
		return m.DeepCopy(), nil
	}
	return resource.Quantity{}, fmt.Errorf("neither spec.domain.memory.guest nor spec.domain.resources.requests.memory is set")
}

// VCPUs is sockets * cores * threads, each at least 1.
func VCPUs(vmi *virtv1.VirtualMachineInstance) int64 {
	cpu := vmi.Spec.Domain.CPU
	if cpu == nil {
		return 1
	}
	n := int64(1)
	for _, f := range []uint32{cpu.Sockets, cpu.Cores, cpu.Threads} {
		if f > 0 {
			n *= int64(f)
		}
	}
	return n
}

// Overhead is the memory the launcher pod needs besides the guest's:
//
//	160Mi + 64Mi (TCG) + 8Mi * vCPUs + guest memory / 128
func Overhead(vmi *virtv1.VirtualMachineInstance, guest resource.Quantity) resource.Quantity {
	o := launcherOverhead.DeepCopy()
	o.Add(tcgOverhead)
	for range VCPUs(vmi) {
		o.Add(vcpuOverhead)
	}
	o.Add(*resource.NewQuantity(guest.Value()/pageTableDivisor, resource.BinarySI))
	return o
}

// Resources are the compute container's: the VMI's requests and limits with
// the overhead added to memory (to the request unless
// overcommitGuestOverhead), a CPU request of 100m per vCPU unless the VMI
// names a CPU request or limit.
func Resources(vmi *virtv1.VirtualMachineInstance) (corev1.ResourceRequirements, error) {
	guest, err := GuestMemory(vmi)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	overhead := Overhead(vmi, guest)
	vr := vmi.Spec.Domain.Resources
	req := vr.Requests.DeepCopy()
	if req == nil {
		req = corev1.ResourceList{}
	}
	mem, ok := req[corev1.ResourceMemory]
	if !ok {
		mem = guest.DeepCopy()
	}
	if !vr.OvercommitGuestOverhead {
		mem.Add(overhead)
	}
	req[corev1.ResourceMemory] = mem
	if _, ok := req[corev1.ResourceCPU]; !ok {
		// As for any pod, a limit without a request is also the request.
		if l, ok := vr.Limits[corev1.ResourceCPU]; ok {
			req[corev1.ResourceCPU] = l.DeepCopy()
		}
	}
	if _, ok := req[corev1.ResourceCPU]; !ok {
		cpu := resource.NewMilliQuantity(defaultCPUPerVCPU.MilliValue()*VCPUs(vmi), resource.DecimalSI)
		req[corev1.ResourceCPU] = *cpu
	}
	var lim corev1.ResourceList
	if len(vr.Limits) > 0 {
		lim = vr.Limits.DeepCopy()
		if m, ok := lim[corev1.ResourceMemory]; ok {
			m.Add(overhead)
			lim[corev1.ResourceMemory] = m
		}
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}, nil
}

// requestTunDevice adds one layout.TunResourceName to the requests and the
// limits: an extended resource must be limited, and its request, if any,
// equal. Extended resources do not count for the pod's QoS class.
func requestTunDevice(r *corev1.ResourceRequirements) {
	one := *resource.NewQuantity(1, resource.DecimalSI)
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = corev1.ResourceList{}
	}
	r.Requests[layout.TunResourceName] = one
	r.Limits[layout.TunResourceName] = one.DeepCopy()
}
