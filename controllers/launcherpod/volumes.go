package launcherpod

import (
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

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
	// serviceAccount is the pod's service account: a serviceAccount
	// volume's, whose token the kubelet projects for the pod's account.
	serviceAccount string
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
	// The launcher does not run the tools; it installs them (installTools)
	// for the containers of container-disk and kernel-boot images.
	v.add(layout.ToolsVolume, layout.ToolsDir, false, emptyDir(&toolsVolumeSizeLimit))

	secrets := sets.New[string]()
	pullSecret := func(name string) {
		if name != "" && !secrets.Has(name) {
			secrets.Insert(name)
			v.pullSecrets = append(v.pullSecrets, corev1.LocalObjectReference{Name: name})
		}
	}
	if kb := kernelBoot(vmi); kb != nil {
		v.add(layout.KernelBootVolume, layout.KernelBootDir, false, emptyDir(&kernelBootVolumeSizeLimit))
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
		case vol.CloudInitConfigDrive != nil:
			ci := vol.CloudInitConfigDrive
			if ci.SecretRef != nil {
				v.add(fmt.Sprintf("cloudinit-%d-userdata", i), layout.UserDataSecretDir(layout.SecretDirRoot, vol.Name), true,
					corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ci.SecretRef.Name}})
			}
			if ci.NetworkDataSecretRef != nil {
				v.add(fmt.Sprintf("cloudinit-%d-networkdata", i), layout.NetworkDataSecretDir(layout.SecretDirRoot, vol.Name), true,
					corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ci.NetworkDataSecretRef.Name}})
			}
		default:
			if src, ok := configSource(&vol); ok {
				v.add(fmt.Sprintf("config-%d", i), layout.ConfigDir(layout.ConfigDirRoot, vol.Name), true, src)
				if vol.ServiceAccount != nil {
					v.serviceAccount = vol.ServiceAccount.ServiceAccountName
				}
			}
		}
	}
	for i, c := range vmi.Spec.AccessCredentials {
		if name := accessSecret(&c); name != "" {
			v.add(fmt.Sprintf("access-%d", i), layout.AccessCredentialDir(layout.AccessCredentialDirRoot, i), true,
				corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}})
		}
	}
	return v
}

// configSource is the pod volume the kubelet projects a config volume from:
// the launcher turns its directory into the guest's disk. The data comes
// the way any pod's does, under the namespace's RBAC and the kubelet's
// rules; the launcher reads it at each start.
func configSource(vol *virtv1.Volume) (corev1.VolumeSource, bool) {
	switch {
	case vol.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: vol.ConfigMap.Name}, Optional: vol.ConfigMap.Optional}}, true
	case vol.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: vol.Secret.SecretName, Optional: vol.Secret.Optional}}, true
	case vol.DownwardAPI != nil:
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: vol.DownwardAPI.Fields}}, true
	case vol.ServiceAccount != nil:
		// What a pod's automounted service account volume holds: token,
		// ca.crt, namespace (the kubelet's kube-api-access volume).
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o644),
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
			}}}, true
	case vol.Sysprep != nil && vol.Sysprep.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *vol.Sysprep.ConfigMap}}, true
	case vol.Sysprep != nil && vol.Sysprep.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: vol.Sysprep.Secret.Name}}, true
	}
	return corev1.VolumeSource{}, false
}

// accessSecret is the secret of an access credential.
func accessSecret(c *virtv1.AccessCredential) string {
	switch {
	case c.SSHPublicKey != nil && c.SSHPublicKey.Source.Secret != nil:
		return c.SSHPublicKey.Source.Secret.SecretName
	case c.UserPassword != nil && c.UserPassword.Source.Secret != nil:
		return c.UserPassword.Source.Secret.SecretName
	}
	return ""
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
