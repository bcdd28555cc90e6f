package v1

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
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// Type: Disk (must exist) or DiskOrCreate.
	Type HostDiskType `json:"type" protobuf:"bytes,2,opt,name=type,casttype=HostDiskType"`
	// Capacity of an image to create.
	// +optional
	Capacity resource.Quantity `json:"capacity,omitempty" protobuf:"bytes,3,opt,name=capacity"`
	// Shared says the path is shared between nodes.
	// +optional
	Shared *bool `json:"shared,omitempty" protobuf:"varint,4,opt,name=shared"`
}

// CloudInitConfigDriveSource is cloud-init data on an OpenStack config drive.
type CloudInitConfigDriveSource struct {
	// SecretRef names a secret holding the user data.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,1,opt,name=secretRef"`
	// UserDataBase64 is the user data, base64 encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty" protobuf:"bytes,2,opt,name=userDataBase64"`
	// UserData is the user data, in plain text.
	// +optional
	UserData string `json:"userData,omitempty" protobuf:"bytes,3,opt,name=userData"`
	// NetworkDataSecretRef names a secret holding the network data.
	// +optional
	NetworkDataSecretRef *corev1.LocalObjectReference `json:"networkDataSecretRef,omitempty" protobuf:"bytes,4,opt,name=networkDataSecretRef"`
	// NetworkDataBase64 is the network data, base64 encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty" protobuf:"bytes,5,opt,name=networkDataBase64"`
	// NetworkData is the network data, in plain text.
	// +optional
	NetworkData string `json:"networkData,omitempty" protobuf:"bytes,6,opt,name=networkData"`
}

// SysprepSource is a Windows answer file (autounattend.xml).
type SysprepSource struct {
	// Secret holding the answer file.
	// +optional
	Secret *corev1.LocalObjectReference `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
	// ConfigMap holding the answer file.
	// +optional
	ConfigMap *corev1.LocalObjectReference `json:"configMap,omitempty" protobuf:"bytes,2,opt,name=configMap"`
}

// EphemeralVolumeSource is a copy-on-write layer over a claim.
type EphemeralVolumeSource struct {
	// PersistentVolumeClaim is the claim under the layer.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,1,opt,name=persistentVolumeClaim"`
}

// DataVolumeSource attaches the claim of a CDI DataVolume.
type DataVolumeSource struct {
	// Name of the DataVolume and of its claim.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Hotpluggable lets the volume be hotplugged.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty" protobuf:"varint,2,opt,name=hotpluggable"`
}

// ConfigMapVolumeSource attaches a ConfigMap as a disk.
type ConfigMapVolumeSource struct {
	// Name of the ConfigMap.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,4,opt,name=name"`
	// Optional lets the ConfigMap be missing.
	// +optional
	Optional *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
	// VolumeLabel of the disk, such as cidata or OEMDRV.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,3,opt,name=volumeLabel"`
}

// SecretVolumeSource attaches a Secret as a disk.
type SecretVolumeSource struct {
	// SecretName names the Secret.
	// +optional
	SecretName string `json:"secretName,omitempty" protobuf:"bytes,1,opt,name=secretName"`
	// Optional lets the Secret be missing.
	// +optional
	Optional *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
	// VolumeLabel of the disk, such as cidata or OEMDRV.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,3,opt,name=volumeLabel"`
}

// DownwardAPIVolumeSource attaches pod information as a disk.
type DownwardAPIVolumeSource struct {
	// Fields are the files of the disk.
	// +optional
	// +listType=atomic
	Fields []corev1.DownwardAPIVolumeFile `json:"fields,omitempty" protobuf:"bytes,1,rep,name=fields"`
	// VolumeLabel of the disk.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,2,opt,name=volumeLabel"`
}

// ServiceAccountVolumeSource attaches a service account's token as a disk.
type ServiceAccountVolumeSource struct {
	// ServiceAccountName names the service account.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,1,opt,name=serviceAccountName"`
}

// DownwardMetricsVolumeSource is a small disk of host metrics.
type DownwardMetricsVolumeSource struct{}

// MemoryDumpVolumeSource is the claim a memory dump is written to.
type MemoryDumpVolumeSource struct {
	// PersistentVolumeClaimVolumeSource names the claim.
	PersistentVolumeClaimVolumeSource `json:",inline" protobuf:"bytes,1,opt,name=persistentVolumeClaimVolumeSource"`
}

// ContainerPathVolumeSource is a path of the launcher container.
type ContainerPathVolumeSource struct {
	// Path in the launcher container, absolute.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// ReadOnly shares it read-only. Defaults to true.
	// +optional
	ReadOnly *bool `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
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
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// ClaimName is the claim of the VMI's namespace.
	ClaimName string `json:"claimName" protobuf:"bytes,4,opt,name=claimName"`
	// ReadOnly mounts the claim read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty" protobuf:"varint,5,opt,name=readOnly"`
	// Type: MemoryDump or Backup.
	// +optional
	Type *UtilityVolumeType `json:"type,omitempty" protobuf:"bytes,3,opt,name=type,casttype=UtilityVolumeType"`
}
