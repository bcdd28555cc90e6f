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
}

// PodNetwork is the launcher pod's network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest's network behind masquerade. It never leaves
	// the pod. Defaults to 198.19.255.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty" protobuf:"bytes,1,opt,name=vmNetworkCIDR"`
}
