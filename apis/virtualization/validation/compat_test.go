package validation

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/install"
	"kubevirt.dev/virt/test/compat"
)

// TestKubeVirtManifests holds the API's promise: a KubeVirt manifest moves
// over by changing its apiVersion. Each manifest of test/compat is decoded
// strictly (an unknown field fails, as with kubectl's default
// --validate=strict), defaulted and converted as the API server does, and
// validated: it is accepted, or refused with exactly the field errors its
// header names, each saying what is not supported and why.
func TestKubeVirtManifests(t *testing.T) {
	manifests, err := compat.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 30 {
		t.Fatalf("%d manifests; the compatibility suite keeps at least 30", len(manifests))
	}
	decoder := strictDecoder()
	for _, m := range manifests {
		t.Run(m.Name, func(t *testing.T) {
			obj, err := runtime.Decode(decoder, m.Moved())
			if err != nil {
				t.Fatalf("strict decoding (the API server answers 400 to it): %v", err)
			}
			errs, warnings := validate(t, obj)
			if m.Accepted {
				for _, e := range errs {
					t.Errorf("refused: %v", e)
				}
			} else {
				checkRefusals(t, m.Refusals, errs)
			}
			for _, want := range m.Warnings {
				if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, want) }) {
					t.Errorf("no warning contains %q; warnings: %q", want, warnings)
				}
			}
		})
	}
}

// The decoder really is strict: a misspelt field of a moved manifest fails.
func TestKubeVirtManifestsDecodeStrictly(t *testing.T) {
	manifests, err := compat.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(manifests[0].Moved()), "\nspec:\n", "\nspec:\n  notAField: 1\n", 1)
	if _, err := runtime.Decode(strictDecoder(), []byte(broken)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("decoding a manifest with an unknown field: %v; want an unknown field error", err)
	}
}

func strictDecoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	// UniversalDecoder without versions decodes to the internal version,
	// defaulting on the way, as the API server does before validating.
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder()
}

// validate validates obj as the create of its kind does, in the namespace
// the request would name.
func validate(t *testing.T, obj runtime.Object) (field.ErrorList, []string) {
	switch o := obj.(type) {
	case *virtualization.VirtualMachineInstance:
		o.Namespace = "default"
		return ValidateVirtualMachineInstance(o), VirtualMachineInstanceWarnings(&o.Spec, "")
	case *virtualization.VirtualMachine:
		o.Namespace = "default"
		return ValidateVirtualMachine(o), VirtualMachineWarnings(o)
	}
	t.Fatalf("decoded a %T, want a VirtualMachineInstance or a VirtualMachine", obj)
	return nil, nil
}

// checkRefusals wants one error at each expected path whose message says
// what the expectation says, and no error elsewhere.
func checkRefusals(t *testing.T, want []compat.Refusal, errs field.ErrorList) {
	t.Helper()
	byPath := map[string][]*field.Error{}
	for _, e := range errs {
		byPath[e.Field] = append(byPath[e.Field], e)
	}
	for _, r := range want {
		got := byPath[r.Path]
		if len(got) == 0 {
			t.Errorf("no error at %s; errors: %v", r.Path, errs)
			continue
		}
		if !slices.ContainsFunc(got, func(e *field.Error) bool { return strings.Contains(e.Error(), r.Message) }) {
			t.Errorf("the error at %s does not say %q: %v", r.Path, r.Message, got)
		}
		delete(byPath, r.Path)
	}
	for _, es := range byPath {
		for _, e := range es {
			t.Errorf("unexpected error: %v", e)
		}
	}
}
