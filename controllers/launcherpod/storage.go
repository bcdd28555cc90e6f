package launcherpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// Size limits of the launcher pod's emptyDirs. The kubelet evicts a pod
// whose emptyDir passes its sizeLimit, so these are hard bounds on what a
// tenant or a guest can put on the node's disk through them, whatever runs
// in the pod; each is several times what the volume holds in use.
var (
	// privateVolumeSizeLimit bounds layout.PrivateVolume: the launcher's
	// socket and ready file, the embedded libvirt's root (qemu.conf, the
	// QEMU capabilities cache, about 1 MiB, a UEFI guest's NVRAM of 528
	// KiB, a TPM's state, pid files), domain.final.json, and the two logs
	// a guest fills, the serial log and QEMU's log, each kept by the
	// launcher below 2 × layout.SerialLogMaxBytes (4 MiB) plus a second of
	// output. About 12 MiB at most; 4.5 MiB measured under a guest printing
	// 25 MiB in two minutes (TestSerialLogStaysBounded).
	privateVolumeSizeLimit = resource.MustParse("64Mi")
	// toolsVolumeSizeLimit bounds layout.ToolsVolume: the static
	// virt-imagecopy (about 2 MiB), written once.
	toolsVolumeSizeLimit = resource.MustParse("64Mi")
	// kernelBootVolumeSizeLimit bounds layout.KernelBootVolume: the
	// records of the kernel-boot container and the launcher's links to
	// the files they name (kernelboot.Link), a few hundred bytes.
	kernelBootVolumeSizeLimit = resource.MustParse("1Mi")
)

// The other emptyDir is unbounded:
//   - layout.DisksVolume has no sizeLimit: it holds the guest's writable
//     disks (the qcow2 overlays over container disks, which grow with
//     every block the guest writes up to the image's virtual size, and
//     emptyDisks up to their capacity). A limit there would evict a guest
//     for using the disk it was given. A VMI that bounds its disk use sets
//     spec.domain.resources.limits[ephemeral-storage], which the compute
//     container carries (plus ephemeralStorageOverhead) and the kubelet
//     enforces over the whole pod.

// ephemeralStorageOverhead is what the pod may write besides the guest's
// disks: its bounded emptyDirs at their limits. The compute container
// requests it, so that the scheduler counts it and, when a node runs short
// of disk, the kubelet evicts first the pods that use more than they
// requested: a guest filling its overlay before the guests that do not.
func ephemeralStorageOverhead() resource.Quantity {
	q := privateVolumeSizeLimit.DeepCopy()
	q.Add(toolsVolumeSizeLimit)
	return q
}

// requestEphemeralStorage adds ephemeralStorageOverhead to the compute
// container's ephemeral-storage request, and to its limit when the VMI
// sets one, as the memory overhead is added (KubeVirt adds 50M the same
// way). No limit is set for a VMI without one: the guest's disks are in
// the pod's ephemeral storage and their size is the guest's business.
func requestEphemeralStorage(r *corev1.ResourceRequirements) {
	overhead := ephemeralStorageOverhead()
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	req := r.Requests[corev1.ResourceEphemeralStorage]
	req.Add(overhead)
	r.Requests[corev1.ResourceEphemeralStorage] = req
	if l, ok := r.Limits[corev1.ResourceEphemeralStorage]; ok {
		l.Add(overhead)
		r.Limits[corev1.ResourceEphemeralStorage] = l
	}
}

func emptyDir(limit *resource.Quantity) corev1.VolumeSource {
	src := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if limit != nil {
		src.EmptyDir.SizeLimit = ptr.To(limit.DeepCopy())
	}
	return src
}
