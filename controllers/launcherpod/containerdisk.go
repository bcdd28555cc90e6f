package launcherpod

import (
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// containerDiskResources are the requests and limits of a container-disk
// container: virt-imagecopy hold, a static Go program that sleeps and looks
// at /proc once a second (about 3 MiB resident). The guest's reads of the
// disk are QEMU's, charged to the compute container. Requests equal limits,
// so the container leaves the pod's QoS class to the compute container.
var containerDiskResources = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("10m"),
	corev1.ResourceMemory: resource.MustParse("16Mi"),
}

// containerDisks are the containers that hold the container disks, one per
// containerDisk volume, in KubeVirt's way: the image runs as a container of
// the pod, its disk is never copied. The container runs virt-imagecopy hold
// from the tools volume (the image holds nothing but the disk), which writes
// the volume's layout.ContainerDiskRecord (its PID, the disk's path) and
// waits until the launcher has gone. The launcher puts a qcow2 overlay in
// the disks volume over /proc/<pid>/root/<path>; the guest writes there.
//
// Regular containers, not init containers: the launcher starts meanwhile,
// and the disk stays in place for as long as the guest runs. The pod's
// single user and shared PID namespace are what make the disk reachable.
func containerDisks(vmi *virtv1.VirtualMachineInstance) []corev1.Container {
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
			Resources: corev1.ResourceRequirements{
				Requests: containerDiskResources.DeepCopy(),
				Limits:   containerDiskResources.DeepCopy(),
			},
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
