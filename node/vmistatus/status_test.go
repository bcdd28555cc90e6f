package vmistatus

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

// scheduled is a VMI just handed to node-1 by virt-controller.
func scheduled() *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-uid"},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{
				{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}},
			}}},
			Networks: []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}},
		},
		Status: virtv1.VirtualMachineInstanceStatus{
			Phase:                         virtv1.Scheduled,
			NodeName:                      "node-1",
			ActivePods:                    map[types.UID]string{"pod-uid": "node-1"},
			LauncherContainerImageVersion: "virt-launcher:v1",
			Conditions: []virtv1.VirtualMachineInstanceCondition{
				{Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			},
			PhaseTransitionTimestamps: []virtv1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: virtv1.Scheduled, PhaseTransitionTimestamp: t0}},
		},
	}
}

func pod() *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{PodIP: "198.18.0.7", PodIPs: []corev1.PodIP{{IP: "198.18.0.7"}}}}
}

func domain(state apiv1.DomainState, reason string) *apiv1.Domain {
	return &apiv1.Domain{State: state, Reason: reason, SoftwareEmulation: true,
		Interfaces: []*apiv1.Interface{{Name: "default", Mac: "52:54:00:12:34:56", Model: "virtio"}}}
}

// migrating is d while its launcher's live migration job runs.
func migrating(d *apiv1.Domain) *apiv1.Domain {
	d.Migration = &apiv1.Migration{MigrationUid: "m-uid", State: apiv1.MigrationState_MIGRATION_STATE_RUNNING, Mode: string(virtv1.MigrationPreCopy)}
	return d
}

var info = &apiv1.InfoResponse{HardwareVirtualization: &apiv1.HardwareVirtualization{Reason: "no vmx or svm flag in /proc/cpuinfo"}}

func TestRunning(t *testing.T) {
	running := domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
	wantRunning := func() *virtv1.VirtualMachineInstanceStatus {
		s := scheduled().Status.DeepCopy()
		s.Phase = virtv1.Running
		s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps, virtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: virtv1.Running, PhaseTransitionTimestamp: t1})
		s.Conditions = append(s.Conditions,
			virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue, LastTransitionTime: t1},
			virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceSoftwareEmulation, Status: corev1.ConditionTrue, LastTransitionTime: t1,
				Reason:  virtv1.ReasonSoftwareEmulation,
				Message: "The guest runs under software emulation (QEMU TCG) because the node has no usable hardware virtualisation: no vmx or svm flag in /proc/cpuinfo"},
		)
		s.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", MAC: "52:54:00:12:34:56", IPAddress: "198.18.0.7", IPAddresses: []string{"198.18.0.7"},
			InfoSource: "domain", PodInterfaceName: "eth0"}}
		return s
	}
	withStatus := func(s *virtv1.VirtualMachineInstanceStatus) *virtv1.VirtualMachineInstance {
		vmi := scheduled()
		vmi.Status = *s
		return vmi
	}
	pausedBy := func(reason string) *virtv1.VirtualMachineInstanceStatus {
		s := wantRunning()
		msg := "The guest's vCPUs are paused (libvirt: " + reason + ")"
		s.Conditions[1] = virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionFalse, LastTransitionTime: t1, Reason: ReasonPaused, Message: msg}
		s.Conditions = append(s.Conditions, virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue, LastTransitionTime: t1, Reason: ReasonPaused, Message: msg})
		return s
	}
	paused := func() *virtv1.VirtualMachineInstanceStatus { return pausedBy("user") }

	tests := []struct {
		name string
		vmi  *virtv1.VirtualMachineInstance
		d    *apiv1.Domain
		info *apiv1.InfoResponse
		want *virtv1.VirtualMachineInstanceStatus
	}{
		{
			name: "scheduled to running: ready, software emulation, interfaces in one status; controller fields kept",
			vmi:  scheduled(), d: running, info: info, want: wantRunning(),
		},
		{
			name: "running and unchanged: identical status",
			vmi:  withStatus(wantRunning()), d: running, info: info, want: wantRunning(),
		},
		{
			name: "paused",
			vmi:  withStatus(wantRunning()), d: domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "user"), info: info, want: paused(),
		},
		{
			name: "paused by its live migration's switchover: conditions as they were",
			vmi:  withStatus(wantRunning()), d: migrating(domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "migration")), info: info, want: wantRunning(),
		},
		{
			name: "the source paused in post-copy: conditions as they were",
			vmi:  withStatus(wantRunning()), d: migrating(domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "postcopy")), info: info, want: wantRunning(),
		},
		{
			name: "paused by the user during a migration",
			vmi:  withStatus(wantRunning()), d: migrating(domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "user")), info: info, want: paused(),
		},
		{
			name: "paused for a copy with the guest paused throughout (mode Paused): paused",
			vmi:  withStatus(wantRunning()), info: info,
			d: func() *apiv1.Domain {
				d := migrating(domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "migration"))
				d.Migration.Mode = string(virtv1.MigrationPaused)
				return d
			}(),
			want: pausedBy("migration"),
		},
		{
			name: "left paused by a migration that ended: paused",
			vmi:  withStatus(wantRunning()), d: domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "migration"), info: info,
			want: pausedBy("migration"),
		},
		{
			name: "resumed: Paused removed, Ready true again",
			vmi:  withStatus(paused()), d: running, info: info, want: wantRunning(),
		},
		{
			name: "hardware virtualisation: no SoftwareEmulation condition",
			vmi:  scheduled(),
			d:    &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_RUNNING, Interfaces: running.Interfaces},
			want: func() *virtv1.VirtualMachineInstanceStatus {
				s := wantRunning()
				s.Conditions = s.Conditions[:2]
				return s
			}(),
		},
		{
			name: "the guest took its lease: infoSource says dhcp",
			vmi:  withStatus(wantRunning()), info: info,
			d: func() *apiv1.Domain {
				d := proto.Clone(running).(*apiv1.Domain)
				d.Interfaces[0].DhcpAddress = "198.19.255.2"
				return d
			}(),
			want: func() *virtv1.VirtualMachineInstanceStatus {
				s := wantRunning()
				s.Interfaces[0].InfoSource = "domain, dhcp"
				return s
			}(),
		},
		{
			name: "info unknown: message without the why",
			vmi:  scheduled(), d: running,
			want: func() *virtv1.VirtualMachineInstanceStatus {
				s := wantRunning()
				s.Conditions[2].Message = "The guest runs under software emulation (QEMU TCG) because the node has no usable hardware virtualisation"
				return s
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The transition times in want are t1 where the test moved them.
			got, _ := Running(tt.vmi, pod(), tt.d, tt.info, t1)
			if tt.vmi.Status.Phase == virtv1.Running {
				// Conditions that stay keep their times: rebuild want from the input.
				for i := range tt.want.Conditions {
					if old := tt.vmi.Status.Condition(tt.want.Conditions[i].Type); old != nil && old.Status == tt.want.Conditions[i].Status {
						tt.want.Conditions[i].LastTransitionTime = old.LastTransitionTime
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Running() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunningIsStable(t *testing.T) {
	// What a restarted handler computes for a guest that kept running must
	// equal what it wrote before, or it would write again.
	vmi := scheduled()
	d := domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
	vmi.Status = *runningStatus(vmi, pod(), d, info, t0)
	again, _ := Running(vmi, pod(), d, info, t1)
	if !equality.Semantic.DeepEqual(&vmi.Status, again) {
		t.Errorf("a second observation of the same domain changed the status:\n%s", cmp.Diff(&vmi.Status, again))
	}
}

func TestEnded(t *testing.T) {
	vmi := scheduled()
	vmi.Status = *runningStatus(vmi, pod(), domain(apiv1.DomainState_DOMAIN_STATE_PAUSED, "user"), info, t0)
	got := Ended(vmi, End{virtv1.Succeeded, virtv1.ReasonGuestShutdown, "The guest powered off"}, t1)

	if got.Phase != virtv1.Succeeded || got.Reason != virtv1.ReasonGuestShutdown {
		t.Errorf("phase, reason = %s, %s; want Succeeded, GuestShutdown", got.Phase, got.Reason)
	}
	if c := got.Condition(virtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != virtv1.ReasonGuestShutdown {
		t.Errorf("Ready = %+v, want False, GuestShutdown", c)
	}
	if c := got.Condition(virtv1.VirtualMachineInstancePaused); c != nil {
		t.Errorf("Paused = %+v, want none", c)
	}
	if c := got.Condition(virtv1.VirtualMachineInstanceSoftwareEmulation); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("SoftwareEmulation = %+v, want kept", c)
	}
	if len(got.Interfaces) != 1 || got.NodeName != "node-1" || len(got.ActivePods) != 1 || got.Condition(virtv1.VirtualMachineInstancePodScheduled) == nil {
		t.Errorf("interfaces or the controller's fields were lost: %+v", got)
	}
	last := got.PhaseTransitionTimestamps[len(got.PhaseTransitionTimestamps)-1]
	if last.Phase != virtv1.Succeeded || !last.PhaseTransitionTimestamp.Equal(&t1) {
		t.Errorf("last phase transition = %+v, want Succeeded at t1", last)
	}
	if vmi.Status.Phase != virtv1.Running {
		t.Error("Ended modified its input")
	}
}

func TestEndOfDomain(t *testing.T) {
	tests := []struct {
		name       string
		d          *apiv1.Domain
		wantPhase  virtv1.VirtualMachineInstancePhase
		wantReason string
	}{
		{"guest shutdown", &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN, Reason: "shutdown"}, virtv1.Succeeded, virtv1.ReasonGuestShutdown},
		{"guest crashed", &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_CRASHED, Reason: "crashed"}, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"qemu killed", &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_CRASHED, Reason: "failed"}, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"destroyed after grace", &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_DESTROYED, ShutdownRequested: true}, virtv1.Failed, virtv1.ReasonGuestDestroyed},
		{"failed", &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_FAILED}, virtv1.Failed, virtv1.ReasonLauncherGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := EndOfDomain(tt.d)
			if e.Phase != tt.wantPhase || e.Reason != tt.wantReason || e.Message == "" {
				t.Errorf("EndOfDomain = %+v, want %s/%s with a message", e, tt.wantPhase, tt.wantReason)
			}
		})
	}
}

func TestEndOfExit(t *testing.T) {
	tests := []struct {
		name       string
		code       int32
		guestRan   bool
		wantPhase  virtv1.VirtualMachineInstancePhase
		wantReason string
	}{
		{"guest powered off", 0, true, virtv1.Succeeded, virtv1.ReasonGuestShutdown},
		{"exited before the guest started", 0, false, virtv1.Failed, virtv1.ReasonLauncherGone},
		{"launcher failed", 1, true, virtv1.Failed, virtv1.ReasonLauncherGone},
		{"crashed", 3, true, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"destroyed", 4, true, virtv1.Failed, virtv1.ReasonGuestDestroyed},
		{"killed (SIGKILL, OOM)", 137, true, virtv1.Failed, virtv1.ReasonLauncherGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := EndOfExit(&corev1.ContainerStateTerminated{ExitCode: tt.code, Reason: "Error"}, tt.guestRan)
			if e.Phase != tt.wantPhase || e.Reason != tt.wantReason || e.Message == "" {
				t.Errorf("EndOfExit(%d) = %+v, want %s/%s with a message", tt.code, e, tt.wantPhase, tt.wantReason)
			}
		})
	}
}
