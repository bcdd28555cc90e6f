package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is a named storage source that a disk of the same name attaches.
type Volume struct {
	// Name of the volume; must be a DNS label and unique in the VMI.
	Name string
	// VolumeSource is where the data comes from. Exactly one member must be set.
	VolumeSource
}

// VolumeSource is where a volume's data comes from.
type VolumeSource struct {
	// ContainerDisk is a disk image shipped in a container image. Writes go
	// to a copy that lives as long as the VMI.
	ContainerDisk *ContainerDiskSource
	// EmptyDisk is a blank, sparse disk that lives as long as the VMI.
	EmptyDisk *EmptyDiskSource
	// CloudInitNoCloud passes user data and network data to cloud-init
	// through a NoCloud ISO (volume label cidata).
	CloudInitNoCloud *CloudInitNoCloudSource
	// PersistentVolumeClaim attaches a claim of the VMI's namespace.
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource
	// HostDisk is a disk image file on the node. Refused: the launcher is
	// unprivileged and sees no path of the node.
	HostDisk *HostDisk
	// CloudInitConfigDrive passes cloud-init data through an OpenStack
	// config drive (label config-2, docs/config-volumes.md).
	CloudInitConfigDrive *CloudInitConfigDriveSource
	// Sysprep passes a Windows answer file on a read-only ISO.
	Sysprep *SysprepSource
	// Ephemeral puts a copy-on-write layer that lives as long as the VMI
	// over a claim. Refused: not implemented yet.
	Ephemeral *EphemeralVolumeSource
	// DataVolume attaches the claim of a CDI DataVolume. Refused: the
	// Containerized Data Importer (CDI) is not installed with this
	// platform; use persistentVolumeClaim.
	DataVolume *DataVolumeSource
	// ConfigMap attaches a ConfigMap as a read-only ISO disk.
	ConfigMap *ConfigMapVolumeSource
	// Secret attaches a Secret as a read-only ISO disk.
	Secret *SecretVolumeSource
	// DownwardAPI attaches pod information as a read-only ISO disk.
	DownwardAPI *DownwardAPIVolumeSource
	// ServiceAccount attaches a service account's token, the cluster's CA
	// and the namespace as a read-only ISO disk. One per VMI.
	ServiceAccount *ServiceAccountVolumeSource
	// DownwardMetrics attaches host metrics as a small disk. Refused: no
	// node component serves the metrics.
	DownwardMetrics *DownwardMetricsVolumeSource
	// MemoryDump is the claim a memory dump of the guest is written to.
	// Refused: this platform takes no memory dumps.
	MemoryDump *MemoryDumpVolumeSource
	// ContainerPath shares a path of the launcher container through
	// virtiofs. Refused: the launcher runs no virtiofsd.
	ContainerPath *ContainerPathVolumeSource
}

// ContainerDiskSource is a disk image inside a container image.
type ContainerDiskSource struct {
	// Image reference.
	Image string
	// ImagePullSecret names a secret in the VMI's namespace.
	ImagePullSecret string
	// Path of the disk image inside the container image. Defaults to the
	// only file under /disk.
	Path string
	// ImagePullPolicy, as for containers.
	ImagePullPolicy corev1.PullPolicy
}

// EmptyDiskSource is a blank disk.
type EmptyDiskSource struct {
	// Capacity of the disk.
	Capacity resource.Quantity
}

// CloudInitNoCloudSource is cloud-init data for the NoCloud datasource.
// Exactly one source of user data must be set; network data is optional.
type CloudInitNoCloudSource struct {
	// SecretRef names a secret whose key "userdata" (or "userData") holds
	// the user data.
	SecretRef *corev1.LocalObjectReference
	// UserDataBase64 is the user data, base64 encoded.
	UserDataBase64 string
	// UserData is the user data, in plain text.
	UserData string
	// NetworkDataSecretRef names a secret whose key "networkdata" (or
	// "networkData") holds the network data.
	NetworkDataSecretRef *corev1.LocalObjectReference
	// NetworkDataBase64 is the network data, base64 encoded.
	NetworkDataBase64 string
	// NetworkData is the network data, in plain text.
	NetworkData string
}

// PersistentVolumeClaimVolumeSource attaches a claim.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the name of a PersistentVolumeClaim in the VMI's namespace.
	ClaimName string
	// ReadOnly attaches the claim read-only.
	ReadOnly bool
	// Hotpluggable lets the volume be attached to and detached from a
	// running guest. true is refused: this platform does not hotplug.
	Hotpluggable bool
}

// Network is a network the guest's interfaces can attach to.
type Network struct {
	// Name of the network; an interface of the same name attaches to it.
	Name string
	// NetworkSource is the kind of network. Exactly one member must be set.
	NetworkSource
}

// NetworkSource is the kind of a network.
type NetworkSource struct {
	// Pod is the launcher pod's own network.
	Pod *PodNetwork
	// Multus is a secondary network of a NetworkAttachmentDefinition.
	// Refused: Multus is not installed with this platform.
	Multus *MultusNetwork
	// ResourceClaim is a network device from a DRA ResourceClaim. Refused:
	// this platform has no DRA driver for network devices.
	ResourceClaim *ClaimRequest
}

// MultusNetwork is a network of a NetworkAttachmentDefinition.
type MultusNetwork struct {
	// NetworkName is the NetworkAttachmentDefinition, as name or
	// namespace/name.
	NetworkName string
	// Default makes it the pod's default network.
	Default bool
}

// PodNetwork is the launcher pod's network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest's network behind masquerade. It never leaves
	// the pod. Defaults to 198.19.255.0/24.
	VMNetworkCIDR string
	// VMIPv6NetworkCIDR is the guest's IPv6 network behind masquerade.
	// Refused: the pod network here is IPv4-only.
	VMIPv6NetworkCIDR string
}
