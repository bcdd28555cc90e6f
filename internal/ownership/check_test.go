package ownership

import (
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// t0 is the time of every transition of the fixtures: two calls give equal
// statuses.
var t0 = metav1.Unix(1700000000, 0)

// The VMI of each stage of its life, as the writers leave it.
func pending() *virtv1.VirtualMachineInstanceStatus {
	s := &virtv1.VirtualMachineInstanceStatus{}
	s.SetPhase(virtv1.Pending, "", t0)
	return s
}

func scheduling() *virtv1.VirtualMachineInstanceStatus {
	s := pending()
	s.SetPhase(virtv1.Scheduling, "", t0)
	s.ActivePods = map[types.UID]string{"pod": ""}
	return s
}

func scheduled(node string) *virtv1.VirtualMachineInstanceStatus {
	s := scheduling()
	s.SetPhase(virtv1.Scheduled, "", t0)
	s.NodeName = node
	s.ActivePods = map[types.UID]string{"pod": node}
	return s
}

func running(node string) *virtv1.VirtualMachineInstanceStatus {
	s := scheduled(node)
	s.SetPhase(virtv1.Running, "", t0)
	s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, t0)
	return s
}

func TestCheck(t *testing.T) {
	now := metav1.Now()
	change := func(s *virtv1.VirtualMachineInstanceStatus, f func(*virtv1.VirtualMachineInstanceStatus)) *virtv1.VirtualMachineInstanceStatus {
		c := s.DeepCopy()
		f(c)
		return c
	}
	tests := []struct {
		name     string
		w        Writer
		node     string
		old, new *virtv1.VirtualMachineInstanceStatus
		want     []string // the refused fields; none: allowed
	}{
		{"controller schedules", VMIController, "", pending(), scheduling(), nil},
		{"controller hands off", VMIController, "", scheduling(), scheduled("a"), nil},
		{"controller fails before the hand-off", VMIController, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonPodFailed, "x", now) }), nil},
		{"controller fails after the hand-off", VMIController, "", scheduled("a"),
			change(scheduled("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonPodFailed, "x", now) }),
			[]string{"status.conditions[Ready]", "status.phase", "status.phaseTransitionTimestamps", "status.reason"}},
		{"controller runs the guest", VMIController, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) { s.SetPhase(virtv1.Running, "", now) }), []string{"status.phase"}},
		{"controller says Ready without ending", VMIController, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, now)
			}), []string{"status.conditions[Ready]"}},
		{"controller writes interfaces", VMIController, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "x"}}
			}), []string{"status.interfaces"}},

		{"handler runs its guest", Handler, "a", scheduled("a"), running("a"), nil},
		{"handler ends its guest", Handler, "a", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.End(virtv1.Succeeded, virtv1.ReasonGuestShutdown, "off", now)
			}), nil},
		{"handler fails a guest it could not start", Handler, "a", scheduled("a"),
			change(scheduled("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonSyncFailed, "no", now) }), nil},
		{"handler reports the guest", Handler, "a", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "x"}}
				s.GuestOSInfo = virtv1.VirtualMachineInstanceGuestOSInfo{Name: "linux"}
			}), nil},
		{"handler hands a Scheduling VMI to its node", Handler, "a", scheduling(), scheduled("a"),
			[]string{"status.activePods", "status.nodeName", "status.phase", "status.phaseTransitionTimestamps"}},
		{"handler writes phase Scheduled", Handler, "a",
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) { s.NodeName = "a" }),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) { s.NodeName = "a"; s.SetPhase(virtv1.Scheduled, "", now) }),
			[]string{"status.phase"}},
		{"handler of another node", Handler, "b", scheduled("a"), running("a"),
			[]string{"status.conditions[Ready]", "status.phase", "status.phaseTransitionTimestamps"}},
		{"handler without a node", Handler, "", scheduled("a"), running("a"),
			[]string{"status.conditions[Ready]", "status.phase", "status.phaseTransitionTimestamps"}},
		{"handler writes the pods", Handler, "a", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.ActivePods = nil }), []string{"status.activePods"}},
		{"handler fails for node health's reason", Handler, "a", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonNodeUnresponsive, "x", now) }),
			[]string{"status.reason"}},

		{"node health marks", NodeHealth, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceNodeUnresponsive, Status: corev1.ConditionTrue}, now)
			}), nil},
		{"node health fails", NodeHealth, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonNodeUnresponsive, "x", now) }), nil},
		{"node health fails for another reason", NodeHealth, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonGuestCrashed, "x", now) }), []string{"status.reason"}},
		{"node health succeeds a VMI", NodeHealth, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.End(virtv1.Succeeded, virtv1.ReasonNodeUnresponsive, "x", now)
			}),
			[]string{"status.phase"}},
		{"node health before the hand-off", NodeHealth, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) { s.Fail(virtv1.ReasonNodeUnresponsive, "x", now) }),
			[]string{"status.conditions[Ready]", "status.phase", "status.phaseTransitionTimestamps", "status.reason"}},
		{"node health unpauses", NodeHealth, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionFalse}, now)
			}), []string{"status.conditions[Ready]"}},

		{"the VM controller", VMController, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.Interfaces = nil; s.NodeName = "" }),
			[]string{"status"}},
		{"nothing changes", VMController, "", running("a"), running("a"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Foreign(tc.w, tc.node, tc.old, tc.new)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Foreign = %v, want %v (%v)", got, tc.want, Check(tc.w, tc.node, tc.old, tc.new))
			}
		})
	}
}

func TestCheckVM(t *testing.T) {
	old := &virtv1.VirtualMachineStatus{PrintableStatus: virtv1.VirtualMachineStatusRunning, Created: true}
	byController := old.DeepCopy()
	byController.Ready = true
	byController.StateChangeRequests = nil
	if v := CheckVM(VMController, old, byController); v != nil {
		t.Errorf("the VM controller's write refused: %v", v)
	}
	request := old.DeepCopy()
	request.StateChangeRequests = []virtv1.VirtualMachineStateChangeRequest{{Action: virtv1.StartRequest}}
	if v := CheckVM(APIServer, old, request); v != nil {
		t.Errorf("the server's start request refused: %v", v)
	}
	if v := CheckVM(APIServer, old, byController); len(v) != 1 || v[0].Field != "status.ready" {
		t.Errorf("the server writing ready: %v, want status.ready refused", v)
	}
	if v := CheckVM(Handler, old, request); len(v) != 1 || v[0].Field != "status" {
		t.Errorf("the handler writing VM status: %v, want refused", v)
	}
}

func TestCheckObject(t *testing.T) {
	meta := metav1.ObjectMeta{Finalizers: []string{"a", "b"}, Labels: map[string]string{"l": "v"}}
	fewer := meta
	fewer.Finalizers = []string{"a"}
	adopted := meta
	adopted.OwnerReferences = []metav1.OwnerReference{{UID: "rs"}}
	relabelled := meta
	relabelled.Labels = map[string]string{"l": "w"}
	empty := meta
	empty.Annotations = map[string]string{} // the same as none
	spec := virtv1.VirtualMachineInstanceSpec{Hostname: "h"}
	tests := []struct {
		name         string
		w            Writer
		r            Resource
		meta         metav1.ObjectMeta
		spec         virtv1.VirtualMachineInstanceSpec
		want         []string
		wantFirstWhy string
	}{
		{"handler removes a finalizer", Handler, VMIs, fewer, spec, nil, ""},
		{"handler relabels", Handler, VMIs, relabelled, spec, []string{"metadata.labels"}, "virt-handler"},
		{"handler changes the spec", Handler, VMIs, meta, virtv1.VirtualMachineInstanceSpec{Hostname: "evil"}, []string{"spec"}, ""},
		{"handler adopts", Handler, VMIs, adopted, spec, []string{"metadata.ownerReferences"}, ""},
		{"replica set adopts", ReplicaSetController, VMIs, adopted, spec, nil, ""},
		{"replica set removes a finalizer", ReplicaSetController, VMIs, fewer, spec, []string{"metadata.finalizers"}, ""},
		{"an empty map is none", Handler, VMIs, empty, spec, nil, ""},
		{"VM controller pins a revision", VMController, VMs, meta, virtv1.VirtualMachineInstanceSpec{Hostname: "x"}, nil, ""},
		{"handler writes a VM", Handler, VMs, fewer, spec, []string{"metadata.finalizers"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckObject(tc.r, tc.w, &meta, &tc.meta, &spec, &tc.spec)
			var got []string
			for _, x := range v {
				got = append(got, x.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("CheckObject = %v, want %v", v, tc.want)
			}
			if tc.wantFirstWhy != "" && !strings.Contains(v[0].Why, tc.wantFirstWhy) {
				t.Errorf("why = %q, want it to name %q", v[0].Why, tc.wantFirstWhy)
			}
		})
	}
}

// Every field of the VM status has a writer, like the VMI's
// (TestEveryFieldHasAnOwner), or is one no component writes yet: those are
// listed here, and writing one is refused until a row owns it.
func TestEveryVMFieldIsKnown(t *testing.T) {
	unwritten := []string{"snapshotInProgress", "restoreInProgress", "volumeRequests", "volumeSnapshotStatuses", "memoryDumpRequest",
		"desiredGeneration", "runStrategy", "volumeUpdateState", "changedBlockTracking"}
	s := ""
	full := &virtv1.VirtualMachineStatus{
		PrintableStatus: "p", Created: true, Ready: true, Conditions: []virtv1.VirtualMachineCondition{{Type: "Ready"}},
		StartFailure: &virtv1.VirtualMachineStartFailure{}, ObservedGeneration: 1,
		StateChangeRequests: []virtv1.VirtualMachineStateChangeRequest{{}}, SnapshotInProgress: &s, RestoreInProgress: &s,
		VolumeRequests: []virtv1.VirtualMachineVolumeRequest{{}}, VolumeSnapshotStatuses: []virtv1.VolumeSnapshotStatus{{}},
		MemoryDumpRequest: &virtv1.VirtualMachineMemoryDumpRequest{}, DesiredGeneration: 1, RunStrategy: "r",
		VolumeUpdateState: &virtv1.VolumeUpdateState{}, ChangedBlockTracking: &virtv1.ChangedBlockTrackingStatus{},
		InstancetypeRef: &virtv1.InstancetypeStatusRef{}, PreferenceRef: &virtv1.InstancetypeStatusRef{},
	}
	for _, f := range ChangedVM(&virtv1.VirtualMachineStatus{}, full) {
		owned := false
		for _, r := range VM {
			owned = owned || slices.Contains(r.Fields, f)
		}
		if !owned && !slices.Contains(unwritten, f) {
			t.Errorf("VM status field %s has no writer in VM and is not listed as unwritten", f)
		}
	}
}

// docs/ownership.md shows Markdown() between its markers; UPDATE_DOCS=1
// rewrites it.
func TestOwnershipDoc(t *testing.T) {
	const path = "../../docs/ownership.md"
	const begin, end = "<!-- BEGIN GENERATED: internal/ownership.Markdown -->\n", "<!-- END GENERATED -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, begin, end)
	}
	want := Markdown()
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("UPDATE_DOCS") != "" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s drifted from internal/ownership (UPDATE_DOCS=1 go test ./internal/ownership/ rewrites it); want:\n%s", path, want)
	}
}
