package crd_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/crd"
	"kubevirt.dev/virt/bench/fixture"
)

// internal converts the CRD the way the kube-apiserver does before
// validating it.
func internal(t *testing.T) *apiextensions.CustomResourceDefinition {
	t.Helper()
	v1crd, err := crd.VMI()
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	out := &apiextensions.CustomResourceDefinition{}
	if err := s.Convert(v1crd, out, nil); err != nil {
		t.Fatalf("convert: %v", err)
	}
	return out
}

// The kube-apiserver refuses a CRD that is not structural; this is its own
// validation.
func TestVMIIsAValidStructuralCRD(t *testing.T) {
	c := internal(t)
	c.Status.StoredVersions = []string{crd.Version} // the server's part
	if errs := validation.ValidateCustomResourceDefinition(t.Context(), c); len(errs) > 0 {
		t.Fatalf("invalid CRD: %v", errs.ToAggregate())
	}
}

// A defaulted VMI with a status keeps every field in the twin: its schema
// has the shape of ours, so the kube-apiserver prunes nothing.
func TestDefaultedVMIIsNotPruned(t *testing.T) {
	c := internal(t)
	// One version: the internal form holds its schema at the top.
	s, err := structuralschema.NewStructural(c.Spec.Validation.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	vmi := fixture.VMI("tiny")
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	vmi.Status.Phase = virtv1.Running
	vmi.Status.NodeName = "node"
	vmi.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", MAC: "52:54:00:00:00:01"}}
	vmi.Finalizers = []string{virtv1.GuestShutdownFinalizer}
	b, err := json.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	obj["apiVersion"] = crd.Group + "/" + crd.Version
	pruned := pruning.PruneWithOptions(obj, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if len(pruned) > 0 {
		t.Fatalf("pruned fields %v: the twin's schema lacks them", pruned)
	}
}
