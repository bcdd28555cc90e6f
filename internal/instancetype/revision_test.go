package instancetype

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func testVM() *virtv1.VirtualMachine {
	return &virtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vm-uid"}}
}

func TestRevisionRoundTrip(t *testing.T) {
	it := &virtv1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "it-uid", Generation: 3, Labels: map[string]string{"x": "y"}},
		Spec:       *u1(1, "2Gi"),
	}
	cr, err := NewRevision(testVM(), it)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Name != "vm-u1.small-it-uid-3" || cr.Namespace != "ns" {
		t.Errorf("revision %s/%s", cr.Namespace, cr.Name)
	}
	if !metav1.IsControlledBy(cr, testVM()) {
		t.Error("revision not controlled by its VM: it would outlive it")
	}
	if cr.Labels[virtv1.RevisionObjectGenerationLabel] != "3" || cr.Labels[virtv1.RevisionObjectKindLabel] != virtv1.ClusterInstancetypeKind {
		t.Errorf("labels %v", cr.Labels)
	}
	// What the API server hands back has Raw only.
	back := &virtv1.VirtualMachineInstancetypeRevision{ObjectMeta: cr.ObjectMeta, Data: runtime.RawExtension{Raw: cr.Data.Raw}}
	c, err := ReadRevision(back)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsInstancetype() || c.Kind != virtv1.ClusterInstancetypeKind || c.Name != "u1.small" || c.Generation != 3 ||
		c.Instancetype.Memory.Guest.String() != "2Gi" || c.Labels != nil {
		t.Errorf("read back %+v (spec %+v)", c, c.Instancetype)
	}
}

// TestKubeVirtRevision: a revision KubeVirt wrote (its group, its JSON)
// reads as ours.
func TestKubeVirtRevision(t *testing.T) {
	raw := []byte(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference",
		"metadata":{"name":"fedora","generation":1},"spec":{"devices":{"preferredDiskBus":"virtio","preferredInterfaceModel":"virtio"}}}`)
	c, err := ReadRevision(&virtv1.VirtualMachineInstancetypeRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Data: runtime.RawExtension{Raw: raw}})
	if err != nil {
		t.Fatal(err)
	}
	if c.IsInstancetype() || c.Preference.Devices.PreferredDiskBus != virtv1.DiskBusVirtio {
		t.Errorf("read %+v", c)
	}
	_, err = ReadRevision(&virtv1.VirtualMachineInstancetypeRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Data: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`)}})
	if err == nil || !strings.Contains(err.Error(), "not an instancetype or preference") {
		t.Errorf("a Deployment's revision: %v", err)
	}
}

func TestRevisionNameFits(t *testing.T) {
	long := strings.Repeat("a", 250)
	name := RevisionName("vm", long, "0123", 1)
	if len(name) > validation.DNS1123SubdomainMaxLength || !strings.HasPrefix(name, "vm-") {
		t.Errorf("name %q (%d chars)", name, len(name))
	}
	if RevisionName("vm", long, "0123", 2) == name {
		t.Error("two generations share a revision name")
	}
}

// source serves objects from maps, as the API server's storage would.
type source struct {
	instancetypes map[string]*virtv1.VirtualMachineClusterInstancetype
	preferences   map[string]*virtv1.VirtualMachinePreference
	revisions     map[string]*virtv1.VirtualMachineInstancetypeRevision
}

func (s *source) Source() *Source {
	gone := func(name string) error { return apierrors.NewNotFound(schema.GroupResource{}, name) }
	src := &Source{
		Instancetype: func(_ context.Context, _, name string) (*virtv1.VirtualMachineInstancetype, error) {
			return nil, gone(name)
		},
		ClusterInstancetype: func(_ context.Context, name string) (*virtv1.VirtualMachineClusterInstancetype, error) {
			if it, ok := s.instancetypes[name]; ok {
				return it, nil
			}
			return nil, gone(name)
		},
		Preference: func(_ context.Context, ns, name string) (*virtv1.VirtualMachinePreference, error) {
			if p, ok := s.preferences[ns+"/"+name]; ok {
				return p, nil
			}
			return nil, gone(name)
		},
		ClusterPreference: func(_ context.Context, name string) (*virtv1.VirtualMachineClusterPreference, error) {
			return nil, gone(name)
		},
	}
	src.Revision = func(_ context.Context, ns, name string) (*virtv1.VirtualMachineInstancetypeRevision, error) {
		if r, ok := s.revisions[ns+"/"+name]; ok {
			return r, nil
		}
		return nil, gone(name)
	}
	return src
}

func TestResolve(t *testing.T) {
	small := &virtv1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "u", Generation: 1}, Spec: *u1(1, "2Gi")}
	oldRev, err := NewRevision(testVM(), &virtv1.VirtualMachineClusterInstancetype{ObjectMeta: small.ObjectMeta, Spec: *u1(1, "1Gi")})
	if err != nil {
		t.Fatal(err)
	}
	prefRev, err := NewRevision(testVM(), &virtv1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &source{
		instancetypes: map[string]*virtv1.VirtualMachineClusterInstancetype{"u1.small": small},
		preferences:   map[string]*virtv1.VirtualMachinePreference{"ns/fedora": {Spec: virtv1.VirtualMachinePreferenceSpec{PreferredSubdomain: ptr.To("f")}}},
		revisions: map[string]*virtv1.VirtualMachineInstancetypeRevision{
			"ns/" + oldRev.Name: oldRev, "ns/" + prefRev.Name: prefRev,
		},
	}
	for _, tc := range []struct {
		name         string
		it           *virtv1.InstancetypeMatcher
		pref         *virtv1.PreferenceMatcher
		wantMemory   string
		wantPref     bool
		wantErrField string
	}{
		{name: "live cluster instancetype by default kind", it: &virtv1.InstancetypeMatcher{Name: "u1.small"}, wantMemory: "2Gi"},
		{name: "kind by plural resource name", it: &virtv1.InstancetypeMatcher{Name: "u1.small", Kind: "virtualmachineclusterinstancetypes"}, wantMemory: "2Gi"},
		{name: "revision wins over the live object", it: &virtv1.InstancetypeMatcher{Name: "u1.small", RevisionName: oldRev.Name}, wantMemory: "1Gi"},
		{name: "namespaced preference", pref: &virtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}, wantPref: true},
		{name: "missing instancetype", it: &virtv1.InstancetypeMatcher{Name: "u1.huge"}, wantErrField: "spec.instancetype.name"},
		{name: "missing namespaced instancetype", it: &virtv1.InstancetypeMatcher{Name: "u1.small", Kind: "VirtualMachineInstancetype"}, wantErrField: "spec.instancetype.name"},
		{name: "bad kind", it: &virtv1.InstancetypeMatcher{Name: "u1.small", Kind: "Flavor"}, wantErrField: "spec.instancetype.kind"},
		{name: "missing revision", it: &virtv1.InstancetypeMatcher{Name: "u1.small", RevisionName: "gone"}, wantErrField: "spec.instancetype.revisionName"},
		{name: "revision of a preference", it: &virtv1.InstancetypeMatcher{Name: "u1.small", RevisionName: prefRev.Name}, wantErrField: "spec.instancetype.revisionName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := testVM()
			vm.Spec.Instancetype, vm.Spec.Preference = tc.it, tc.pref
			e, errs, err := s.Source().Resolve(context.Background(), vm)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErrField != "" {
				if len(errs) != 1 || errs[0].Field != tc.wantErrField {
					t.Fatalf("errs %v, want one at %s", errs, tc.wantErrField)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if tc.wantMemory != "" && e.Instancetype.Memory.Guest.Cmp(resource.MustParse(tc.wantMemory)) != 0 {
				t.Errorf("memory %s, want %s", e.Instancetype.Memory.Guest.String(), tc.wantMemory)
			}
			if tc.wantPref != (e.Preference != nil) {
				t.Errorf("preference %+v", e.Preference)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestValidateRevisionData: a revision's copy is checked, once, as the
// object it copies would be, and must hold one of the four kinds.
func TestValidateRevisionData(t *testing.T) {
	ours, err := NewRevision(testVM(), &virtv1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "u", Generation: 1}, Spec: *u1(1, "2Gi")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		raw     []byte
		wantErr string // "" when valid
	}{
		{name: "ours", raw: ours.Data.Raw},
		{name: "KubeVirt's preference", raw: []byte(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference",
			"metadata":{"name":"fedora","generation":1,"managedFields":[]},"spec":{"devices":{"preferredDiskBus":"virtio"}}}`)},
		{name: "refused hardware", wantErr: "dedicatedCPUPlacement", raw: mustJSON(t, map[string]any{
			"apiVersion": "virtualization.kubevirt.io/v1", "kind": "VirtualMachineInstancetype",
			"spec": map[string]any{"cpu": map[string]any{"guest": 1, "dedicatedCPUPlacement": true}, "memory": map[string]any{"guest": "1Gi"}},
		})},
		{name: "no vCPUs", wantErr: "data.spec.cpu.guest", raw: mustJSON(t, map[string]any{
			"apiVersion": "virtualization.kubevirt.io/v1", "kind": "VirtualMachineInstancetype",
			"spec": map[string]any{"memory": map[string]any{"guest": "1Gi"}},
		})},
		{name: "unknown field", wantErr: "unknown field", raw: mustJSON(t, map[string]any{
			"apiVersion": "virtualization.kubevirt.io/v1", "kind": "VirtualMachinePreference",
			"spec": map[string]any{"preferredDiskBuss": "virtio"},
		})},
		{name: "no spec", wantErr: "has no spec", raw: []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachinePreference"}`)},
		{name: "a Deployment", wantErr: "not an instancetype or preference", raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`)},
		{name: "not JSON", wantErr: "holds no instancetype", raw: []byte(`garbage`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateRevisionData(tc.raw, field.NewPath("data"))
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantErr) {
				t.Fatalf("errs %v, want one about %q", errs, tc.wantErr)
			}
		})
	}
}
