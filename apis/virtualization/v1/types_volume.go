package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is a named storage source that a disk of the same name attaches.
type Volume struct {
	// Name of the volume; must be a DNS label and unique in the VMI.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// VolumeSource is where the data comes from. Exactly one member must be set.
	VolumeSource `json:",inline" protobuf:"bytes,2,opt,name=volumeSource"`
}

// VolumeSource is where a volume's data comes from.
type VolumeSource struct {
	// ContainerDisk is a disk image shipped in a container image. Writes go
	// to a copy that lives as long as the VMI.
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty" protobuf:"bytes,1,opt,name=containerDisk"`
	// EmptyDisk is a blank, sparse disk that lives as long as the VMI.
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty" protobuf:"bytes,2,opt,name=emptyDisk"`
	// CloudInitNoCloud passes user data and network data to cloud-init
	// through a NoCloud ISO (volume label cidata).
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty" protobuf:"bytes,3,opt,name=cloudInitNoCloud"`
	// PersistentVolumeClaim attaches a claim of the VMI's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,4,opt,name=persistentVolumeClaim"`
	// HostDisk is a disk image file on the node. Refused: the launcher is
	// unprivileged and sees no path of the node.
	// +optional
	HostDisk *HostDisk `json:"hostDisk,omitempty" protobuf:"bytes,5,opt,name=hostDisk"`
	// CloudInitConfigDrive passes cloud-init data through an OpenStack
	// config drive (label config-2, docs/config-volumes.md).
	// +optional
	CloudInitConfigDrive *CloudInitConfigDriveSource `json:"cloudInitConfigDrive,omitempty" protobuf:"bytes,6,opt,name=cloudInitConfigDrive"`
	// Sysprep passes a Windows answer file on a read-only ISO.
	// +optional
	Sysprep *SysprepSource `json:"sysprep,omitempty" protobuf:"bytes,7,opt,name=sysprep"`
	// Ephemeral puts a copy-on-write layer that lives as long as the VMI
	// over a claim. Refused: not implemented yet.
	// +optional
	Ephemeral *EphemeralVolumeSource `json:"ephemeral,omitempty" protobuf:"bytes,8,opt,name=ephemeral"`
	// DataVolume attaches the claim of a CDI DataVolume. Refused: the
	// Containerized Data Importer (CDI) is not installed with this
	// platform; use persistentVolumeClaim.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty" protobuf:"bytes,9,opt,name=dataVolume"`
	// ConfigMap attaches a ConfigMap as a read-only ISO disk.
	// +optional
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty" protobuf:"bytes,10,opt,name=configMap"`
	// Secret attaches a Secret as a read-only ISO disk.
	// +optional
	Secret *SecretVolumeSource `json:"secret,omitempty" protobuf:"bytes,11,opt,name=secret"`
	// DownwardAPI attaches pod information as a read-only ISO disk.
	// +optional
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty" protobuf:"bytes,12,opt,name=downwardAPI"`
	// ServiceAccount attaches a service account's token, the cluster's CA
	// and the namespace as a read-only ISO disk. One per VMI.
	// +optional
	ServiceAccount *ServiceAccountVolumeSource `json:"serviceAccount,omitempty" protobuf:"bytes,13,opt,name=serviceAccount"`
	// DownwardMetrics attaches host metrics as a small disk. Refused: no
	// node component serves the metrics.
	// +optional
	DownwardMetrics *DownwardMetricsVolumeSource `json:"downwardMetrics,omitempty" protobuf:"bytes,14,opt,name=downwardMetrics"`
	// MemoryDump is the claim a memory dump of the guest is written to.
	// Refused: this platform takes no memory dumps.
	// +optional
	MemoryDump *MemoryDumpVolumeSource `json:"memoryDump,omitempty" protobuf:"bytes,15,opt,name=memoryDump"`
	// ContainerPath shares a path of the launcher container through
	// virtiofs. Refused: the launcher runs no virtiofsd.
	// +optional
	ContainerPath *ContainerPathVolumeSource `json:"containerPath,omitempty" protobuf:"bytes,16,opt,name=containerPath"`
}

// ContainerDiskSource is a disk image inside a container image.
type ContainerDiskSource struct {
	// Image reference.
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
	// ImagePullSecret names a secret in the VMI's namespace.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty" protobuf:"bytes,2,opt,name=imagePullSecret"`
	// Path of the disk image inside the container image. Defaults to the
	// only file under /disk.
	// +optional
	Path string `json:"path,omitempty" protobuf:"bytes,3,opt,name=path"`
	// ImagePullPolicy, as for containers.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty" protobuf:"bytes,4,opt,name=imagePullPolicy,casttype=k8s.io/api/core/v1.PullPolicy"`
}

// EmptyDiskSource is a blank disk.
type EmptyDiskSource struct {
	// Capacity of the disk.
	Capacity resource.Quantity `json:"capacity" protobuf:"bytes,1,opt,name=capacity"`
}

// CloudInitNoCloudSource is cloud-init data for the NoCloud datasource.
// Exactly one source of user data must be set; network data is optional.
type CloudInitNoCloudSource struct {
	// SecretRef names a secret whose key "userdata" (or "userData") holds
	// the user data.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,1,opt,name=secretRef"`
	// UserDataBase64 is the user data, base64 encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty" protobuf:"bytes,2,opt,name=userDataBase64"`
	// UserData is the user data, in plain text.
	// +optional
	UserData string `json:"userData,omitempty" protobuf:"bytes,3,opt,name=userData"`
	// NetworkDataSecretRef names a secret whose key "networkdata" (or
	// "networkData") holds the network data.
	// +optional
	NetworkDataSecretRef *corev1.LocalObjectReference `json:"networkDataSecretRef,omitempty" protobuf:"bytes,4,opt,name=networkDataSecretRef"`
	// NetworkDataBase64 is the network data, base64 encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty" protobuf:"bytes,5,opt,name=networkDataBase64"`
	// NetworkData is the network data, in plain text.
	// +optional
	NetworkData string `json:"networkData,omitempty" protobuf:"bytes,6,opt,name=networkData"`
}

// PersistentVolumeClaimVolumeSource attaches a claim.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the name of a PersistentVolumeClaim in the VMI's namespace.
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	// ReadOnly attaches the claim read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
	// Hotpluggable lets the volume be attached to and detached from a
	// running guest. true is refused: this platform does not hotplug.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty" protobuf:"varint,3,opt,name=hotpluggable"`
}

// Network is a network the guest's interfaces can attach to.
type Network struct {
	// Name of the network; an interface of the same name attaches to it.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// NetworkSource is the kind of network. Exactly one member must be set.
	NetworkSource `json:",inline" protobuf:"bytes,2,opt,name=networkSource"`
}

// NetworkSource is the kind of a network.
type NetworkSource struct {
	// Pod is the launcher pod's own network.
	// +optional
	Pod *PodNetwork `json:"pod,omitempty" protobuf:"bytes,1,opt,name=pod"`
	// Multus is a secondary network of a NetworkAttachmentDefinition.
	// Refused: Multus is not installed with this platform.
	// +optional
	Multus *MultusNetwork `json:"multus,omitempty" protobuf:"bytes,2,opt,name=multus"`
	// ResourceClaim is a network device from a DRA ResourceClaim. Refused:
	// this platform has no DRA driver for network devices.
	// +optional
	ResourceClaim *ClaimRequest `json:"resourceClaim,omitempty" protobuf:"bytes,3,opt,name=resourceClaim"`
}

// MultusNetwork is a network of a NetworkAttachmentDefinition.
type MultusNetwork struct {
	// NetworkName is the NetworkAttachmentDefinition, as name or
	// namespace/name.
	NetworkName string `json:"networkName" protobuf:"bytes,1,opt,name=networkName"`
	// Default makes it the pod's default network.
	// +optional
	Default bool `json:"default,omitempty" protobuf:"varint,2,opt,name=default"`
}

// PodNetwork is the launcher pod's network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest's network behind masquerade. It never leaves
	// the pod. Defaults to 198.19.255.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty" protobuf:"bytes,1,opt,name=vmNetworkCIDR"`
	// VMIPv6NetworkCIDR is the guest's IPv6 network behind masquerade.
	// Refused: the pod network here is IPv4-only.
	// +optional
	VMIPv6NetworkCIDR string `json:"vmIPv6NetworkCIDR,omitempty" protobuf:"bytes,2,opt,name=vmIPv6NetworkCIDR"`
}
