package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The volume sources of KubeVirt this platform accepts in the schema and
// refuses in validation (see the comments of VolumeSource for why each).

// HostDiskType says whether a host disk image must exist.
// +enum
type HostDiskType string

// Host disk types.
const (
	HostDiskExists         HostDiskType = "Disk"
	HostDiskExistsOrCreate HostDiskType = "DiskOrCreate"
)

// HostDisk is a disk image file on the node.
type HostDisk struct {
	// Path of the image on the node.
	Path string
	// Type: Disk (must exist) or DiskOrCreate.
	Type HostDiskType
	// Capacity of an image to create.
	Capacity resource.Quantity
	// Shared says the path is shared between nodes.
	Shared *bool
}

// CloudInitConfigDriveSource is cloud-init data on an OpenStack config drive.
type CloudInitConfigDriveSource struct {
	// SecretRef names a secret holding the user data.
	SecretRef *corev1.LocalObjectReference
	// UserDataBase64 is the user data, base64 encoded.
	UserDataBase64 string
	// UserData is the user data, in plain text.
	UserData string
	// NetworkDataSecretRef names a secret holding the network data.
	NetworkDataSecretRef *corev1.LocalObjectReference
	// NetworkDataBase64 is the network data, base64 encoded.
	NetworkDataBase64 string
	// NetworkData is the network data, in plain text.
	NetworkData string
}

// SysprepSource is a Windows answer file (autounattend.xml).
type SysprepSource struct {
	// Secret holding the answer file.
	Secret *corev1.LocalObjectReference
	// ConfigMap holding the answer file.
	ConfigMap *corev1.LocalObjectReference
}

// EphemeralVolumeSource is a copy-on-write layer over a claim.
type EphemeralVolumeSource struct {
	// PersistentVolumeClaim is the claim under the layer.
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource
}

// DataVolumeSource attaches the claim of a CDI DataVolume.
type DataVolumeSource struct {
	// Name of the DataVolume and of its claim.
	Name string
	// Hotpluggable lets the volume be hotplugged.
	Hotpluggable bool
}

// ConfigMapVolumeSource attaches a ConfigMap as a disk.
type ConfigMapVolumeSource struct {
	// Name of the ConfigMap.
	Name string
	// Optional lets the ConfigMap be missing.
	Optional *bool
	// VolumeLabel of the disk, such as cidata or OEMDRV.
	VolumeLabel string
}

// SecretVolumeSource attaches a Secret as a disk.
type SecretVolumeSource struct {
	// SecretName names the Secret.
	SecretName string
	// Optional lets the Secret be missing.
	Optional *bool
	// VolumeLabel of the disk, such as cidata or OEMDRV.
	VolumeLabel string
}

// DownwardAPIVolumeSource attaches pod information as a disk.
type DownwardAPIVolumeSource struct {
	// Fields are the files of the disk.
	Fields []corev1.DownwardAPIVolumeFile
	// VolumeLabel of the disk.
	VolumeLabel string
}

// ServiceAccountVolumeSource attaches a service account's token as a disk.
type ServiceAccountVolumeSource struct {
	// ServiceAccountName names the service account.
	ServiceAccountName string
}

// DownwardMetricsVolumeSource is a small disk of host metrics.
type DownwardMetricsVolumeSource struct{}

// MemoryDumpVolumeSource is the claim a memory dump is written to.
type MemoryDumpVolumeSource struct {
	// PersistentVolumeClaimVolumeSource names the claim.
	PersistentVolumeClaimVolumeSource
}

// ContainerPathVolumeSource is a path of the launcher container.
type ContainerPathVolumeSource struct {
	// Path in the launcher container, absolute.
	Path string
	// ReadOnly shares it read-only. Defaults to true.
	ReadOnly *bool
}

// UtilityVolumeType is what a utility volume is for.
// +enum
type UtilityVolumeType string

// Utility volume types.
const (
	UtilityVolumeMemoryDump UtilityVolumeType = "MemoryDump"
	UtilityVolumeBackup     UtilityVolumeType = "Backup"
)

// UtilityVolume is a claim mounted into the launcher pod for an operation
// (a memory dump, a backup), not attached to the guest.
type UtilityVolume struct {
	// Name of the volume, unique among volumes and utility volumes.
	Name string
	// ClaimName is the claim of the VMI's namespace.
	ClaimName string
	// ReadOnly mounts the claim read-only.
	ReadOnly bool
	// Type: MemoryDump or Backup.
	Type *UtilityVolumeType
}
