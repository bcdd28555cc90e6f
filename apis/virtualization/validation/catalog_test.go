package validation_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// TestShippedCatalog: every instancetype and preference the platform ships
// (artifacts/instancetypes) decodes strictly and is valid, and u1.small is
// KubeVirt's: one vCPU, 2Gi.
func TestShippedCatalog(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(virtualization.SchemeGroupVersion)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "artifacts", "instancetypes", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("catalog files %v: %v", files, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs := utilyaml.NewYAMLReader(bufioReader(data))
		for {
			doc, err := docs.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 || bytes.HasPrefix(bytes.TrimSpace(doc), []byte("#")) && !bytes.Contains(doc, []byte("kind:")) {
				continue
			}
			obj, err := runtime.Decode(decoder, doc)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			switch o := obj.(type) {
			case *virtualization.VirtualMachineClusterInstancetype:
				seen[o.Name] = true
				if errs := validation.ValidateVirtualMachineClusterInstancetype(o); len(errs) > 0 {
					t.Errorf("%s %s: %v", f, o.Name, errs)
				}
				if o.Name == "u1.small" && (o.Spec.CPU.Guest != 1 || o.Spec.Memory.Guest.String() != "2Gi") {
					t.Errorf("u1.small is %d vCPUs and %s, want KubeVirt's 1 and 2Gi", o.Spec.CPU.Guest, o.Spec.Memory.Guest.String())
				}
				if o.Name == "o1.small" && o.Spec.Memory.OvercommitPercent != 50 {
					t.Errorf("o1.small overcommits %d%%, want 50", o.Spec.Memory.OvercommitPercent)
				}
			case *virtualization.VirtualMachineClusterPreference:
				seen[o.Name] = true
				if errs := validation.ValidateVirtualMachineClusterPreference(o); len(errs) > 0 {
					t.Errorf("%s %s: %v", f, o.Name, errs)
				}
			default:
				t.Errorf("%s: a %T in the catalog", f, obj)
			}
		}
	}
	for _, name := range []string{"u1.nano", "u1.micro", "u1.small", "u1.medium", "u1.large", "o1.nano", "o1.small", "fedora", "ubuntu", "alpine", "cirros"} {
		if !seen[name] {
			t.Errorf("%s not shipped", name)
		}
	}
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// TestInstancetypeExample: the example VM sized by the catalog decodes
// strictly and is valid as written (its template undefaulted).
func TestInstancetypeExample(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(virtualization.SchemeGroupVersion)
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "artifacts", "examples", "vm-instancetype.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.Decode(decoder, data)
	if err != nil {
		t.Fatal(err)
	}
	vm, ok := obj.(*virtualization.VirtualMachine)
	if !ok {
		t.Fatalf("a %T", obj)
	}
	if vm.Spec.Instancetype == nil || vm.Spec.Instancetype.Name != "u1.nano" || vm.Spec.Template.Spec.Domain.CPU != nil {
		t.Errorf("instancetype %+v, template cpu %+v", vm.Spec.Instancetype, vm.Spec.Template.Spec.Domain.CPU)
	}
	vm.Namespace = "default" // kubectl's, from the context
	if errs := validation.ValidateVirtualMachine(vm); len(errs) > 0 {
		t.Error(errs)
	}
}
