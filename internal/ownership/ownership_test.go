package ownership

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestChanged(t *testing.T) {
	now := metav1.Now()
	old := &virtv1.VirtualMachineInstanceStatus{
		Phase:      virtv1.Running,
		NodeName:   "n",
		Conditions: []virtv1.VirtualMachineInstanceCondition{{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}},
	}
	updated := old.DeepCopy()
	updated.Fail(virtv1.ReasonNodeUnresponsive, "gone", now)
	updated.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default"}}

	want := []string{"conditions[Ready]", "interfaces", "phase", "phaseTransitionTimestamps", "reason"}
	if got := Changed(old, updated); !slices.Equal(got, want) {
		t.Errorf("Changed = %v, want %v", got, want)
	}
	if got := Foreign(NodeHealth, "", old, updated); !slices.Equal(got, []string{"status.interfaces"}) {
		t.Errorf("Foreign(NodeHealth) = %v, want [status.interfaces]", got)
	}
	// The handler ends VMIs, but not for node health's reason.
	if got := Foreign(Handler, "n", old, updated); !slices.Equal(got, []string{"status.reason"}) {
		t.Errorf("Foreign(Handler) = %v, want [status.reason]", got)
	}
	if got := Changed(old, old.DeepCopy()); len(got) != 0 {
		t.Errorf("Changed of an identical status = %v", got)
	}
}

// Every field of the status has at least one writer: a field added to the
// type without an owner fails here before any writer fails on it.
func TestEveryFieldHasAnOwner(t *testing.T) {
	full := &virtv1.VirtualMachineInstanceStatus{
		Phase: virtv1.Running, Reason: "r", NodeName: "n", LauncherContainerImageVersion: "i",
		Interfaces:                []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "x"}},
		PhaseTransitionTimestamps: []virtv1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: virtv1.Running}},
		ActivePods:                map[types.UID]string{"u": "n"},
	}
	for _, c := range []virtv1.VirtualMachineInstanceConditionType{virtv1.VirtualMachineInstanceReady, virtv1.VirtualMachineInstancePaused,
		virtv1.VirtualMachineInstanceSoftwareEmulation, virtv1.VirtualMachineInstancePodScheduled} {
		full.Conditions = append(full.Conditions, virtv1.VirtualMachineInstanceCondition{Type: c, Status: corev1.ConditionTrue})
	}
	owned := sets.New[string]()
	for _, fields := range Owned {
		owned = owned.Union(fields)
	}
	for _, f := range Changed(&virtv1.VirtualMachineInstanceStatus{}, full) {
		if !owned.Has(f) {
			t.Errorf("status field %s has no writer in Owned", f)
		}
	}
}

// TestArchitectureDocAgrees reads the table of docs/architecture.md's "Who
// owns which field": a cell other than — gives the column's writer the row's
// fields. It must say what Owned says.
func TestArchitectureDocAgrees(t *testing.T) {
	raw, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "| status field |")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no table starting "| status field |"`)
	}
	lines := strings.Split(doc[start:], "\n")
	header := cells(lines[0])[1:]
	fromDoc := map[Writer]sets.Set[string]{}
	for _, h := range header {
		if _, ok := Owned[Writer(h)]; !ok {
			t.Fatalf("docs/architecture.md names writer %q, which Owned does not know", h)
		}
		fromDoc[Writer(h)] = sets.New[string]()
	}
	field := regexp.MustCompile("`([^`]+)`")
	for _, line := range lines[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		row := cells(line)
		for i, cell := range row[1:] {
			if cell == "—" {
				continue
			}
			for _, m := range field.FindAllStringSubmatch(row[0], -1) {
				fromDoc[Writer(header[i])].Insert(m[1])
			}
		}
	}
	for w, fields := range Owned {
		if !fields.Equal(fromDoc[w]) {
			t.Errorf("%s: docs/architecture.md says %v, Owned says %v", w, sets.List(fromDoc[w]), sets.List(fields))
		}
	}
}

func cells(line string) []string {
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
