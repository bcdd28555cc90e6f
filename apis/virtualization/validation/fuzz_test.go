package validation_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// FuzzDecodeDefaultValidate feeds arbitrary bodies through what the API
// server does with a request: decode (JSON or YAML), default, convert to the
// internal version, validate, and encode the answer. Nothing may panic,
// whatever the body; `make test` runs it for a bounded time.
func FuzzDecodeDefaultValidate(f *testing.F) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	decoder := codecs.UniversalDecoder(virtualization.SchemeGroupVersion)
	encoder := codecs.LegacyCodec(virtv1.SchemeGroupVersion)

	seeds, _ := filepath.Glob(filepath.Join("..", "v1", "testdata", "kubevirt", "*.yaml"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"a"},"spec":{"domain":{"devices":{"disks":[{"name":"d","bootOrder":0}]},"resources":{"requests":{"memory":"1Ki"}}},"volumes":[{"name":"d","emptyDisk":{"capacity":"-1"}}]}}`))
	f.Add([]byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"b"},"spec":{"running":true,"runStrategy":"x","template":{"spec":{"domain":{"cpu":{"cores":4294967295,"sockets":4294967295},"devices":{}}}}}}`))

	f.Add([]byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineClusterInstancetype","metadata":{"name":"u1.small"},"spec":{"cpu":{"guest":4294967295},"memory":{"guest":"-2Gi","overcommitPercent":-1}}}`))
	f.Add([]byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachinePreference","metadata":{"name":"p"},"spec":{"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":0}},"requirements":{"memory":{"guest":"0"}}}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := runtime.Decode(decoder, data)
		if err != nil {
			return
		}
		switch o := obj.(type) {
		case *virtualization.VirtualMachineInstance:
			_ = validation.ValidateVirtualMachineInstance(o)
			_ = validation.VirtualMachineInstanceWarnings(&o.Spec, "")
			_ = validation.ValidateVirtualMachineInstanceStatusUpdate(o, o.DeepCopy())
		case *virtualization.VirtualMachine:
			_ = validation.ValidateVirtualMachine(o)
			_ = validation.VirtualMachineWarnings(o)
		case *virtualization.VirtualMachineInstancetype:
			_ = validation.ValidateVirtualMachineInstancetype(o)
		case *virtualization.VirtualMachineClusterInstancetype:
			_ = validation.ValidateVirtualMachineClusterInstancetype(o)
		case *virtualization.VirtualMachinePreference:
			_ = validation.ValidateVirtualMachinePreference(o)
		case *virtualization.VirtualMachineClusterPreference:
			_ = validation.ValidateVirtualMachineClusterPreference(o)
		default:
			return
		}
		if _, err := runtime.Encode(encoder, obj); err != nil {
			t.Fatalf("a decoded object cannot be encoded back: %v", err)
		}
	})
}
