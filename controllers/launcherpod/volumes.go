package launcherpod

import (
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// volumes are the pod's volumes, the compute container's mounts of them and
// its block devices, and the pull secrets of the images the pod runs.
type volumes struct {
	volumes        []corev1.Volume
	computeMounts  []corev1.VolumeMount
	computeDevices []corev1.VolumeDevice
	pullSecrets    []corev1.LocalObjectReference
}

func (v *volumes) add(name, mountPath string, readOnly bool, src corev1.VolumeSource) {
	v.volumes = append(v.volumes, corev1.Volume{Name: name, VolumeSource: src})
	v.computeMounts = append(v.computeMounts, corev1.VolumeMount{Name: name, MountPath: mountPath, ReadOnly: readOnly})
}

// newVolumes names the pod's volumes after the layout's names, and the
// volumes it derives from the VMI's by kind and index: a VMI volume may have
// any DNS-label name, including one of the layout's, and a suffix could
// push it past 63 characters.
func newVolumes(vmi *virtv1.VirtualMachineInstance, cfg Config) *volumes {
	v := &volumes{}
	// The emptyDirs' size limits are in storage.go.
	v.add(layout.PrivateVolume, layout.PrivateDir, false, emptyDir(&privateVolumeSizeLimit))
	v.add(layout.DisksVolume, layout.DisksDir, false, emptyDir(nil))
	// The launcher does not need the tools; the volume exists for the
	// containers of container-disk and kernel-boot images only.
	v.volumes = append(v.volumes, corev1.Volume{Name: layout.ToolsVolume, VolumeSource: emptyDir(&toolsVolumeSizeLimit)})

	secrets := sets.New[string]()
	pullSecret := func(name string) {
		if name != "" && !secrets.Has(name) {
			secrets.Insert(name)
			v.pullSecrets = append(v.pullSecrets, corev1.LocalObjectReference{Name: name})
		}
	}
	if kb := kernelBoot(vmi); kb != nil {
		v.add(layout.KernelBootVolume, layout.KernelBootDir, true, emptyDir(kernelBootSizeLimit(vmi)))
		pullSecret(kb.ImagePullSecret)
	}
	for i, vol := range vmi.Spec.Volumes {
		switch {
		case vol.ContainerDisk != nil:
			pullSecret(vol.ContainerDisk.ImagePullSecret)
		case vol.PersistentVolumeClaim != nil:
			claim := vol.PersistentVolumeClaim
			name := fmt.Sprintf("pvc-%d", i)
			src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: claim.ClaimName, ReadOnly: claim.ReadOnly}}
			if claimIsBlock(vmi, vol.Name) {
				// A block claim cannot be mounted: the kubelet hands the
				// device itself to the container.
				v.volumes = append(v.volumes, corev1.Volume{Name: name, VolumeSource: src})
				v.computeDevices = append(v.computeDevices, corev1.VolumeDevice{
					Name: name, DevicePath: layout.PVCDevice(layout.PVCDeviceRoot, vol.Name)})
				continue
			}
			v.add(name, filepath.Join(layout.PVCDirRoot, vol.Name), claim.ReadOnly, src)
		case vol.CloudInitNoCloud != nil:
			ci := vol.CloudInitNoCloud
			if ci.SecretRef != nil {
				v.add(fmt.Sprintf("cloudinit-%d-userdata", i), layout.UserDataSecretDir(layout.SecretDirRoot, vol.Name), true,
					corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ci.SecretRef.Name}})
			}
			if ci.NetworkDataSecretRef != nil {
				v.add(fmt.Sprintf("cloudinit-%d-networkdata", i), layout.NetworkDataSecretDir(layout.SecretDirRoot, vol.Name), true,
					corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ci.NetworkDataSecretRef.Name}})
			}
		}
	}
	return v
}

// claimIsBlock reports whether the claim of volume is in Block mode, as
// virt-controller recorded it in the VMI's volumeStatus before rendering the
// pod: the pod's volume is then a device, not a mount.
func claimIsBlock(vmi *virtv1.VirtualMachineInstance, volume string) bool {
	for _, vs := range vmi.Status.VolumeStatus {
		if vs.Name == volume && vs.PersistentVolumeClaimInfo != nil {
			mode := vs.PersistentVolumeClaimInfo.VolumeMode
			return mode != nil && *mode == corev1.PersistentVolumeBlock
		}
	}
	return false
}
