package launcherpod

import (
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubectl/pkg/util/qos"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// holderResources are the requests of a container that holds files for the
// launcher (kernel boot, container disks): virt-imagecopy hold, a static Go
// program that sleeps and looks at /proc once a second (about 3 MiB
// resident). The guest's reads of the files are QEMU's, charged to the
// compute container.
var holderResources = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("10m"),
	corev1.ResourceMemory: resource.MustParse("16Mi"),
}

// holderCPULimit is a holder's CPU limit outside Guaranteed pods. A limit
// of 10m is a CFS quota of 1 ms per 100 ms: the runtime's start of the
// container and the tool's own start took 2 s each under it (measured), on
// the critical path of every start, where the launcher waits for the
// holders' records. 200m makes that a tenth of a second, and still bounds
// the container; a limit there must be (a ResourceQuota on limits.cpu
// refuses a pod with a container without one).
var holderCPULimit = resource.MustParse("200m")

// holderRequirements are holderResources as requests, and as limits the
// memory and holderCPULimit; in a pod of the Guaranteed QoS class the
// limits are the requests, so that the holders leave the pod's class to
// the compute container (and start slower).
func holderRequirements(compute corev1.ResourceRequirements) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{
		Requests: holderResources.DeepCopy(),
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    holderCPULimit.DeepCopy(),
			corev1.ResourceMemory: holderResources[corev1.ResourceMemory].DeepCopy(),
		},
	}
	if guaranteed(compute) {
		r.Limits = holderResources.DeepCopy()
	}
	return r
}

// guaranteed reports whether a container with r is of the Guaranteed QoS
// class, by Kubernetes' own rule (the compute container's requests are
// always given: Resources).
func guaranteed(r corev1.ResourceRequirements) bool {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: r}}}}
	return qos.ComputePodQOS(pod) == corev1.PodQOSGuaranteed
}

// containerDisks are the containers that hold the container disks, one per
// containerDisk volume, in KubeVirt's way: the image runs as a container of
// the pod, its disk is never copied. The container runs virt-imagecopy hold
// from the tools volume (the image holds nothing but the disk), which writes
// the volume's layout.ContainerDiskRecord (its PID, the disk's path) and
// waits until the launcher has gone. The launcher puts a qcow2 overlay in
// the disks volume over /proc/<pid>/root/<path>; the guest writes there.
//
// Regular containers, not init containers: the launcher starts before them,
// and the disk stays in place for as long as the guest runs. The pod's
// single user and shared PID namespace are what make the disk reachable.
func containerDisks(vmi *virtv1.VirtualMachineInstance, compute corev1.ResourceRequirements) []corev1.Container {
	var containers []corev1.Container
	for i, vol := range vmi.Spec.Volumes {
		cd := vol.ContainerDisk
		if cd == nil {
			continue
		}
		src := cd.Path
		if src == "" {
			src = defaultDiskSource
		}
		containers = append(containers, corev1.Container{
			Name:            containerDiskName(i, vol.Name),
			Image:           cd.Image,
			ImagePullPolicy: cd.ImagePullPolicy,
			Command:         []string{toolPath(), "hold", src, layout.ContainerDiskRecord(layout.DisksDir, vol.Name), LauncherBinary},
			Resources:       holderRequirements(compute),
			VolumeMounts: []corev1.VolumeMount{readOnlyToolsMount(),
				{Name: layout.DisksVolume, MountPath: layout.DisksDir}},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext:          containerSecurityContext(),
		})
	}
	return containers
}

// containerDiskArgs name the containerDisk volumes to the launcher, which
// marks its pod ready only once each one's record is there.
func containerDiskArgs(vmi *virtv1.VirtualMachineInstance) []string {
	var args []string
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil {
			args = append(args, "--container-disk", vol.Name)
		}
	}
	return args
}

// toolPath is virt-imagecopy in the tools volume.
func toolPath() string {
	return filepath.Join(layout.ToolsDir, layout.CopyToolName)
}

func readOnlyToolsMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: layout.ToolsVolume, MountPath: layout.ToolsDir, ReadOnly: true}
}

// containerDiskName names the container holding volume name, the i-th of
// the VMI: after the volume, unless that would be no container name (a
// volume name may have 63 characters itself, and underscores or capitals,
// as KubeVirt's do), then by its index.
func containerDiskName(i int, name string) string {
	if n := containerDiskPrefix + name; len(validation.IsDNS1123Label(n)) == 0 {
		return n
	}
	return containerDiskPrefix + strconv.Itoa(i)
}
