package v1_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization/install"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestKubeVirtReplicaSetDecodes: KubeVirt's replica set manifest decodes
// strictly after changing only its apiVersion, and comes out defaulted.
func TestKubeVirtReplicaSetDecodes(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(virtv1.SchemeGroupVersion)
	data, err := os.ReadFile(filepath.Join("testdata", "kubevirt", "vmi-replicaset-cirros.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("apiVersion: kubevirt.io/v1\n"), []byte("apiVersion: virtualization.kubevirt.io/v1\n"), 1)
	obj, err := runtime.Decode(decoder, data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	rs, ok := obj.(*virtv1.VirtualMachineInstanceReplicaSet)
	if !ok {
		t.Fatalf("decoded a %T, not a VirtualMachineInstanceReplicaSet", obj)
	}
	equal(t, *rs.Spec.Replicas, int32(3))
	equal(t, rs.Spec.Selector.MatchLabels, map[string]string{"kubevirt.io/vmReplicaSet": "vmi-replicaset-cirros"})
	equal(t, rs.Spec.Template.ObjectMeta.Labels["kubevirt.io/vmReplicaSet"], "vmi-replicaset-cirros")
	equal(t, rs.Spec.Template.Spec.Domain.Memory.Guest.String(), "128Mi")
	equal(t, rs.Spec.Template.Spec.Domain.Machine.Type, virtv1.DefaultMachineType) // the template is defaulted like a VMI
	equal(t, rs.Spec.Paused, false)
}

func TestReplicaSetDefaults(t *testing.T) {
	tests := []struct {
		name     string
		replicas *int32
		want     int32
	}{
		{"one replica when unset", nil, 1},
		{"zero kept", ptr.To(int32(0)), 0},
		{"given kept", ptr.To(int32(5)), 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &virtv1.VirtualMachineInstanceReplicaSet{Spec: virtv1.VirtualMachineInstanceReplicaSetSpec{
				Replicas: tc.replicas,
				Template: &virtv1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}},
			}}
			virtv1.SetObjectDefaults_VirtualMachineInstanceReplicaSet(rs)
			equal(t, *rs.Spec.Replicas, tc.want)
			equal(t, *rs.Spec.Template.Spec.TerminationGracePeriodSeconds, virtv1.DefaultTerminationGracePeriodSeconds)
		})
	}
}
