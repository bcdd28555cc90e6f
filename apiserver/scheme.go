package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"kubevirt.dev/virt/apis/virtualization/install"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancereplicaset"
)

var (
	// Scheme knows the internal and v1 types of the group.
	Scheme = runtime.NewScheme()
	// Codecs encode and decode them in JSON, YAML and protobuf.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	install.Install(Scheme)
	// The kind of virtualmachineinstancereplicasets/scale.
	utilruntime.Must(virtualmachineinstancereplicaset.AddScaleToScheme(Scheme))

	// Options (ListOptions, DeleteOptions...) and Status of meta/v1 are
	// registered unversioned so that every version of the group accepts them.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}
