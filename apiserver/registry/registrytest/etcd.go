package registrytest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"

	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// NewScheme returns a scheme with the virtualization group installed.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return scheme
}

// NewRESTOptions starts an etcd for the test (stopped at its end) and returns
// options for a store of resource on it, encoding objects as v1 protobuf like
// the server does.
func NewRESTOptions(t *testing.T, scheme *runtime.Scheme, resource string) (generic.RESTOptions, *etcd3testing.EtcdTestServer) {
	t.Helper()
	server, config := etcd3testing.NewUnsecuredEtcd3TestClientServer(t)
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	config.Codec = codecs.CodecForVersions(info.Serializer, codecs.UniversalDecoder(), virtv1.SchemeGroupVersion, nil)
	return generic.RESTOptions{
		StorageConfig:           config.ForResource(schema.GroupResource{Group: virtv1.GroupName, Resource: resource}),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          resource,
	}, server
}

// OptionsGetter hands the same options to every store built on it.
type OptionsGetter generic.RESTOptions

// GetRESTOptions implements generic.RESTOptionsGetter.
func (o OptionsGetter) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions(o), nil
}

// SharedOptionsGetter starts one etcd for the test and hands every store
// built on it options of its own resource there, for tests whose stores
// work together (a VM's actions on its instance).
func SharedOptionsGetter(t *testing.T, scheme *runtime.Scheme) generic.RESTOptionsGetter {
	t.Helper()
	opts, _ := NewRESTOptions(t, scheme, "")
	return sharedGetter(opts)
}

type sharedGetter generic.RESTOptions

// GetRESTOptions implements generic.RESTOptionsGetter.
func (o sharedGetter) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	opts := generic.RESTOptions(o)
	opts.StorageConfig = opts.StorageConfig.ForResource(resource)
	opts.ResourcePrefix = resource.Resource
	return opts, nil
}
