package validation

import (
	"reflect"
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
	case *virtualization.VirtualMachineInstancetype:
		o.Namespace = "default"
		return ValidateVirtualMachineInstancetype(o), nil
	case *virtualization.VirtualMachineClusterInstancetype:
		return ValidateVirtualMachineClusterInstancetype(o), nil
	case *virtualization.VirtualMachinePreference:
		o.Namespace = "default"
		return ValidateVirtualMachinePreference(o), nil
	case *virtualization.VirtualMachineClusterPreference:
		return ValidateVirtualMachineClusterPreference(o), nil
	}
	t.Fatalf("decoded a %T, want a VirtualMachineInstance, a VirtualMachine, an instancetype or a preference", obj)
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

// instancetypeStructs are the structs of the instancetype and preference
// specs themselves (not the VMI types they hold).
var instancetypeStructs = map[string]bool{
	"VirtualMachineInstancetypeSpec": true, "CPUInstancetype": true, "MemoryInstancetype": true,
	"VirtualMachinePreferenceSpec": true, "CPUPreferences": true, "SpreadOptions": true, "DevicePreferences": true,
	"FeaturePreferences": true, "FirmwarePreferences": true, "MachinePreferences": true, "ClockPreferences": true,
	"VolumePreferences": true, "PreferenceRequirements": true,
}

// The every-field manifests really carry every field of KubeVirt's
// instancetype and preference specs, so their strict decoding proves that
// none of them is an unknown field: a field added to the spec without
// being added to the manifest fails here.
func TestKubeVirtInstancetypeManifestsSetEveryField(t *testing.T) {
	manifests, err := compat.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"instancetype-every-field", "preference-every-field"} {
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(manifests, func(m compat.Manifest) bool { return m.Name == name })
			if i < 0 {
				t.Fatalf("no manifest %s", name)
			}
			obj, err := runtime.Decode(strictDecoder(), manifests[i].Moved())
			if err != nil {
				t.Fatal(err)
			}
			var spec reflect.Value
			switch o := obj.(type) {
			case *virtualization.VirtualMachineInstancetype:
				spec = reflect.ValueOf(o.Spec)
			case *virtualization.VirtualMachinePreference:
				spec = reflect.ValueOf(o.Spec)
			default:
				t.Fatalf("decoded a %T", obj)
			}
			for _, unset := range unsetFields(spec, "spec") {
				t.Errorf("%s is not set", unset)
			}
		})
	}
}

// unsetFields lists the zero fields of v, looking into the instancetype's
// and preference's own structs.
func unsetFields(v reflect.Value, path string) []string {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var out []string
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), path+"."+v.Type().Field(i).Name
		if f.IsZero() {
			out = append(out, name)
			continue
		}
		t := f.Type()
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct && instancetypeStructs[t.Name()] {
			out = append(out, unsetFields(f, name)...)
		}
	}
	return out
}

// Every manifest of the corpora (manifests written by others) decodes
// strictly once moved: none has a field the schema does not know. What the
// server answers to each is test/integration/apiserver's TestCorpora.
func TestCorpusManifestsDecodeStrictly(t *testing.T) {
	manifests, err := compat.CorpusManifests()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 90 {
		t.Fatalf("%d corpus manifests; the corpora hold 50 of the user guide's and others', 35 of KubeVirt's examples and the setup", len(manifests))
	}
	decoder := strictDecoder()
	for _, m := range manifests {
		if _, err := runtime.Decode(decoder, m.Moved()); err != nil {
			t.Errorf("%s (%s): strict decoding: %v", m.Path, m.Source, err)
		}
	}
}
